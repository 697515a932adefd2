"""The report formats, in one place: each name and the module that writes it (imported when first
rendered, :mod:`linter.report`). The CLI's ``--format``/``--output FORMAT:FILE`` choices, the
README's list and the tests read :data:`FORMATS` from here; this module imports nothing, so the
command's start does not pay for the reports' modules."""

MODULES = {
    "text": "mlops_lint.report.text",
    "json": "mlops_lint.report.json_report",
    "sarif": "mlops_lint.report.sarif",
    "github": "mlops_lint.report.github",
    "junit": "mlops_lint.report.junit",
    "gitlab": "mlops_lint.report.gitlab",
}
FORMATS = tuple(MODULES)
