"""The report formats, in one place: each name and the module that writes it (imported when first
rendered, :mod:`linter.report`). The CLI's ``--format``/``--output FORMAT:FILE`` choices, the
README's list and the tests read :data:`FORMATS` from here; this module imports nothing, so the
command's start does not pay for the reports' modules."""

MODULES = {
    "text": "linter.report.text",
    "json": "linter.report.json_report",
    "sarif": "linter.report.sarif",
    "github": "linter.report.github",
    "junit": "linter.report.junit",
    "gitlab": "linter.report.gitlab",
}
FORMATS = tuple(MODULES)
