"""Command line (SPEC section 1): click only; args -> Config -> engine -> report -> exit status.

Exit status: 0 nothing at or above --fail-on, 1 at least one such finding, 2 usage error,
invalid config, a PATH that does not exist, or an error of the environment (a file that cannot be
written, a name over the system's limit, a closed stdout), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import click

from mlops_lint import __version__
from mlops_lint.formats import FORMATS  # the one list of report formats

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class DefaultToCheck(click.Group):
    """``mlops-lint [OPTIONS] [PATH ...]`` is ``mlops-lint check …``; a subcommand name wins
    over a path of the same name (``./rules`` is a path)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--version", "--help", "-h")):
            args = ["check", *args]
        if args[0] == "check":
            _refuse_options_named_like_files(args[1:])
        from mlops_lint.output import reader_gone, stream_error

        try:  # --version and --help print here
            return super().parse_args(ctx, args)
        except BrokenPipeError:
            reader_gone()
            raise click.exceptions.Exit(EXIT_CLEAN) from None
        except OSError as exc:
            error = stream_error(exc)
            if error is None:
                raise
            raise _fail(str(error)) from None

    def invoke(self, ctx: click.Context):
        """A bug in mlops-lint exits 2 with its traceback, never 1: a CI gate must not read a crash
        as "findings" (Python's own status for an uncaught exception)."""
        from mlops_lint.output import OutputError, reader_gone, stream_error

        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except OutputError as exc:  # a full disk, a read-only folder: the environment, not a bug
            raise _fail(str(exc)) from None
        except BrokenPipeError:  # printed by click (a subcommand's --help), to a reader gone
            reader_gone()
            raise click.exceptions.Exit(EXIT_CLEAN) from None
        except OSError as exc:
            if (error := stream_error(exc)) is not None:
                raise _fail(str(error)) from None
            if exc.errno not in ENVIRONMENT_ERRORS:
                raise
            name = f": {_short(os.fsdecode(exc.filename))}" if exc.filename is not None else ""
            raise _fail(f"{exc.strerror or exc}{name}") from None
        except Exception:  # noqa: BLE001
            import traceback

            traceback.print_exc()
            click.echo("mlops-lint: internal error (a bug in mlops-lint): please report it with the traceback "
                       "above", err=True)
            raise click.exceptions.Exit(EXIT_USAGE) from None


def _refuse_options_named_like_files(args: list[str]) -> None:
    """An option that is also the name of a file here is refused (exit 2): pre-commit appends the
    staged names to a hook's command, and without a `--` before them a committed file named
    ``--fail-on=never`` or ``--write-baseline=b.yaml`` would turn a failing gate green (issue 32,
    item 23). The packaged hooks end their entry with `--`; this guards a hand-written one. One
    ``lstat`` per option given, none for paths."""
    for arg in args:
        if arg == "--":
            return
        if arg.startswith("-") and arg != "-" and os.path.lexists(arg):
            raise _fail(f"the option {_short(arg)!r} is also the name of a file here: put `--` before file names "
                        f"(mlops-lint [OPTIONS] -- FILE ...), or write it ./{_short(arg)} (a pre-commit hook's entry "
                        "must end with `--`, as the mlops-lint hooks' does)")


def _exists(path: str) -> bool:
    """Whether PATH names something (a dangling link too); a name the system refuses (longer than
    the name limit, a loop of links) is a usage error, not a crash."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _fail(f"cannot use the path {_short(path)}: {exc.strerror or exc}") from None
    return True


def _short(text: str, keep: int = 80) -> str:
    """A long name cut in the middle for a one-line message."""
    return text if len(text) <= 2 * keep else f"{text[:keep]}...{text[-keep:]}"


# errors of the environment (a name past the system's limit, a full disk, a refused folder), as
# opposed to a bug: wherever they surface, they are one line and exit 2, never "internal error"
ENVIRONMENT_ERRORS = frozenset({errno.ENAMETOOLONG, errno.ENOSPC, errno.EROFS, errno.EDQUOT, errno.EACCES,
                                errno.EPERM, errno.ELOOP, errno.EMFILE, errno.ENFILE, errno.EFBIG, errno.EIO})


def _fail(message: str) -> "click.exceptions.Exit":
    from mlops_lint.report.common import printable

    # a message may quote a name or value from the linted tree (a config key, a file name)
    click.echo(f"mlops-lint: error: {printable(message)}", err=True)
    return click.exceptions.Exit(EXIT_USAGE)


def _registry(cache_dir: Path | None = None):
    """The registry; with a cache folder, the built-in rules come from its rule index
    (:mod:`linter.ruleindex`) when it is current."""
    from mlops_lint.engine.memory import collector_paused
    from mlops_lint.registry import RegistryError, load_registry

    try:
        with collector_paused():
            return load_registry(str(cache_dir) if cache_dir is not None else None)
    except RegistryError as exc:
        raise _fail(f"invalid rule package: {exc}") from None
    finally:
        _resume_collector()  # paused since the start (see run)


_startup_paused = False  # whether _pause_for_startup paused the garbage collector


def _pause_for_startup() -> None:
    """The cyclic garbage collector paused from the command's start until the rules are imported
    (:func:`_resume_collector`): importing allocates much and frees almost nothing, so each
    collection pass would only rescan the modules being built (measured: a fifth of the CPU time
    of importing the CLI and every rule, 0.13 -> 0.105 s). The engine pauses it again while it
    lints (linter.engine.memory)."""
    global _startup_paused
    import gc

    if gc.isenabled():
        gc.disable()
        _startup_paused = True


def _resume_collector() -> None:
    global _startup_paused
    if _startup_paused:
        import gc

        _startup_paused = False
        gc.enable()


def _cache_dir(given: Path | None, disabled: bool) -> Path | None:
    """--no-cache, else --cache-dir, else none if $MLOPS_LINT_NO_CACHE is set, else the default."""
    if disabled:
        return None
    if given is not None:
        return _usable_cache(given, "--cache-dir")
    if os.environ.get("MLOPS_LINT_NO_CACHE"):
        return None
    if os.environ.get("MLOPS_LINT_CACHE_DIR"):
        return _usable_cache(Path(os.environ["MLOPS_LINT_CACHE_DIR"]), "MLOPS_LINT_CACHE_DIR")
    from mlops_lint.cache import default_dir

    return default_dir()


def _usable_cache(folder: Path, source: str) -> Path | None:
    """``folder`` if the result cache can live there; else None (the run goes on uncached) with a
    note. --cache-dir and $MLOPS_LINT_CACHE_DIR are judged alike: a file, or a folder that cannot
    be listed and written, is not a cache (a missing folder is made by the cache)."""
    problem = None
    try:
        if not folder.is_dir():
            problem = "is not a folder" if folder.exists() else None
        elif not os.access(folder, os.R_OK | os.W_OK | os.X_OK):
            problem = "cannot be read and written"
    except OSError as exc:
        problem = exc.strerror or str(exc)
    if problem is None:
        return folder
    click.echo(f"mlops-lint: note: the cache folder {folder} ({source}) {problem}; linting without the result "
               "cache", err=True)
    return None


def _split(values: tuple[str, ...]) -> list[str]:
    return [token.strip() for value in values for token in value.split(",") if token.strip()]


# What a run built, kept to the end of the process (linter.engine.Wants.parts): set by run(), which then
# ends the process without freeing it; None where main() is called by a process that goes on
_KEPT: list | None = None


def run() -> None:
    """The ``mlops-lint`` command and ``python -m mlops_lint``: :func:`main`, then the process ends
    at once, as mypy's does. A large run leaves millions of objects (the index, every finding);
    freeing them one by one costs 0.2-0.3 s at 10,000 files, for memory the operating system
    takes back at once. Output is flushed first, so nothing written is lost."""
    from mlops_lint.origin import isolate

    _pause_for_startup()  # until the rules are imported (see _registry)
    isolate()  # nothing is imported from the current folder (or a relative PYTHONPATH entry)
    global _KEPT
    _KEPT = []
    from mlops_lint.output import fit_streams, interrupted, stdout_closed

    import signal

    signal.signal(signal.SIGINT, interrupted)  # Ctrl-C: one line, exit 130, workers die with us
    if sys.stdout is None:  # started with descriptor 1 closed: nothing may be opened onto it
        stdout_closed()
    fit_streams()  # a Latin-1 or KOI8-R stdout gets "..." for "…", never a UnicodeEncodeError
    try:
        main(prog_name="mlops-lint")
        code: object = EXIT_CLEAN
    except SystemExit as exc:
        code = exc.code
    except BrokenPipeError:  # --version or --help, printed while the arguments are read, to a reader gone
        from mlops_lint.output import reader_gone

        reader_gone()
        code = EXIT_CLEAN
    if code is None:
        code = EXIT_CLEAN
    elif not isinstance(code, int):  # sys.exit("message"), as Python itself would print it
        print(code, file=sys.stderr)
        code = EXIT_FINDINGS
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away (`| head`), or a closed stream
            pass
    os._exit(code)


@click.group(cls=DefaultToCheck, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mlops-lint", message="%(prog)s %(version)s")
def main() -> None:
    """Lint Kubernetes manifests, Dockerfiles and `az aks` scripts of ML workloads on AKS.

    \b
    mlops-lint [OPTIONS] [PATH ...]   lint (the same as `check`; see `mlops-lint check --help`)
    mlops-lint rules | explain RULE | init | server | --version
    """


@main.command("check", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True, help="Report format.")
@click.option("-o", "--output", "outputs", multiple=True, metavar="[FORMAT:]FILE",
              help="Write the report to FILE; FORMAT:FILE (repeatable, FORMAT one of --format's) writes one more "
                   "report in FORMAT, beside the one on stdout (--output sarif:reports/x.sarif).")
@click.option("--config", "config_path", type=click.Path(path_type=Path), help="Config file for the whole run (default: each file's project root's own .mlops-lint.yaml or pyproject.toml).")
@click.option("--select", multiple=True, help="Comma list of rule ids, slugs or prefixes to run (replaces the config's).")
@click.option("--ignore", multiple=True, help="Comma list of rule ids, slugs or prefixes not to run.")
@click.option("--profile", type=click.Choice(("aks-standard", "aks-automatic")), help="Cluster profile (default aks-standard).")
@click.option("--fail-on", type=click.Choice(("error", "warning", "info", "never")), help="Lowest severity that makes exit 1 (default warning).")
@click.option("--fail-on-empty", is_flag=True, default=None,
              help="Exit 1 when no file is linted (every file skipped, none found, an empty stdin).")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Ignore findings recorded in FILE.")
@click.option("--no-inline-suppressions", is_flag=True,
              help="Ignore `# mlops-lint: disable=…` comments and ignore annotations: only the config's ignores "
                   "and the baseline suppress (a CI gate).")
@click.option("--write-baseline", type=click.Path(dir_okay=False, path_type=Path), help="Record the current findings in FILE and exit 0.")
@click.option("--jobs", type=click.IntRange(min=1), help="Parallel workers (default: CPU count; 1 = in-process).")
@click.option("--cache-dir", type=click.Path(readable=False, path_type=Path),
              help="Result cache folder (default: $MLOPS_LINT_CACHE_DIR, else the user cache folder).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache.")
@click.option("--stdin-filename", help="Name (and type) of the document read from '-'.")
@click.option("--no-color", is_flag=True, help="No ANSI colour in text output.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only, no summary.")
@click.option("--show-suppressed", is_flag=True, help="Also print suppressed findings (text).")
@click.option("--statistics", is_flag=True,
              help="Per-rule counts (count, id, severity, slug), most frequent first, instead of the findings "
                   "(text or json).")
@click.option("--fix", "fix", is_flag=True,
              help="Apply the safe fixes to the target files, then report what is left.")
@click.option("--diff", is_flag=True,
              help="Print the unified diff of what --fix would change, change nothing (exit 1 when there is a diff).")
@click.option("--unsafe-fixes", is_flag=True,
              help="With --fix or --diff, also apply fixes that change behaviour beyond the rule's intent.")
def check(paths: tuple[str, ...], fmt: str, outputs: tuple[str, ...], config_path: Path | None, select: tuple[str, ...],
          ignore: tuple[str, ...], profile: str | None, fail_on: str | None, fail_on_empty: bool | None,
          baseline: Path | None, no_inline_suppressions: bool,
          write_baseline: Path | None, jobs: int | None, cache_dir: Path | None, no_cache: bool,
          stdin_filename: str | None, no_color: bool, quiet: bool, show_suppressed: bool, statistics: bool,
          fix: bool, diff: bool, unsafe_fixes: bool) -> None:
    """Lint PATHs (default "."; "-" reads stdin); --fix repairs what the rules know how to."""
    from msgspec.structs import replace

    from mlops_lint.config import ConfigError, env_no_color, load_config
    from mlops_lint.engine import LintRequest, Wants, cap_jobs, lint_run
    from mlops_lint.output import echo, write_file
    from mlops_lint.report import render
    from mlops_lint.custom import is_custom_selector

    output, reports = _outputs(outputs)
    if reports and (diff or write_baseline is not None):
        raise _fail("--output FORMAT:FILE writes reports of a lint: --diff and --write-baseline write none")
    if statistics and fmt not in ("text", "json"):
        raise _fail(f"--statistics gives text or json, not --format {fmt}")
    if (fix or diff) and "-" in paths:
        raise _fail("--fix and --diff change files, not stdin: name the file instead of '-'")
    if diff and (statistics or write_baseline is not None):
        raise _fail("--diff prints the diff only: it takes no --statistics or --write-baseline")
    folder = _cache_dir(cache_dir, no_cache)
    registry = _registry(folder)
    cwd = Path.cwd()
    use_stdin = "-" in paths
    file_paths = [Path(p) for p in paths if p != "-"] or ([] if use_stdin else [Path(".")])
    missing = [p for p in paths if p != "-" and not _exists(p)]
    if missing:
        hint = ""
        if any(p.startswith("-") for p in missing):  # only after `--` is such a name a path
            hint = (" (after `--` every argument is a path, as the pre-commit hook's entry ends: set options in "
                    ".mlops-lint.yaml, not in the hook's `args:`)")
        raise _fail(f"path does not exist: {', '.join(missing)}{hint}")
    if baseline is not None:  # a bad baseline is reported before the lint, not after it
        from mlops_lint.suppress import Baseline

        try:
            Baseline.load(baseline, cwd)
        except ValueError as exc:
            raise _fail(str(exc)) from None
    select_tokens, ignore_tokens = _split(select), _split(ignore)
    for token in [*select_tokens, *ignore_tokens]:
        if not registry.is_known_selector(token) and not is_custom_selector(token):
            raise _fail(f"unknown rule or prefix {token!r} in --select/--ignore{registry.selector_hint(token)} "
                        "(see `mlops-lint rules`)")
    overrides = {key: value for key, value in (("profile", profile), ("fail_on", fail_on),
                                               ("fail_on_empty", fail_on_empty)) if value}
    if profile:
        overrides["profile_from"] = "--profile"
    if no_inline_suppressions:
        overrides["inline_suppressions"] = False
    config = None  # each project's own, found from its root (linter.roots); --config: one for the run
    if config_path is not None:
        try:
            config = replace(load_config(config_path, registry), **overrides)
        except ConfigError as exc:
            raise _fail(str(exc)) from None
    if use_stdin:  # at most one byte over the size limit: the loader reports the file as too large
        from mlops_lint.sources.text import MAX_FILE_BYTES

        stdin = (stdin_filename or "-", sys.stdin.buffer.read(MAX_FILE_BYTES + 1))
    else:
        stdin = None
    workers, capped = cap_jobs(jobs)
    if capped is not None:
        click.echo(f"mlops-lint: note: {capped}", err=True)
    request = LintRequest(
        paths=file_paths, config=config, registry=registry, select=select_tokens or None, ignore=ignore_tokens,
        jobs=workers, stdin=stdin, baseline=baseline, cwd=cwd, cache_dir=folder, overrides=overrides,
    )
    outcome = None
    try:
        if fix or diff:
            from mlops_lint.fix.run import run_fixes

            outcome = run_fixes(request, unsafe=unsafe_fixes, write=not diff)
            report = outcome.report
        else:  # what the run built is kept (_KEPT) where the process ends without freeing it
            done = lint_run(request, Wants(parts=_KEPT is not None))
            report = done.report
            if _KEPT is not None:
                _KEPT.append(done)
    except ConfigError as exc:  # a project's config file
        raise _fail(str(exc)) from None
    except ValueError as exc:  # an unreadable baseline
        raise _fail(str(exc)) from None
    if _KEPT is not None:
        _KEPT.append(report)
    if unsafe_fixes:  # the text report's [*] and summary count unsafe fixes as fixable
        report.unsafe_fixing.update(report.file_status)
    if diff:
        _show_diff(outcome, output, quiet)

    if write_baseline is not None:
        from mlops_lint.suppress import write_baseline as record

        count = record(report.active, write_baseline, cwd)
        click.echo(f"mlops-lint: recorded {count} findings in {write_baseline}", err=True)
        raise click.exceptions.Exit(EXIT_CLEAN)

    from mlops_lint.report import RenderOptions
    from mlops_lint.report.text import format_finding, render_statistics, summary_line

    if report.nothing_linted and (quiet and fmt == "text" and not statistics or fmt == "gitlab"
                                  or fmt != "text" and sys.stderr.isatty()):
        # text gives it as its summary line (-q: here); a machine format as a note, and on a terminal here too;
        # GitLab's format has no place for it: here always
        click.echo(f"mlops-lint: no files linted: {report.nothing_linted}", err=True)
    color = fmt == "text" and output is None and not no_color and not env_no_color() and sys.stdout.isatty()
    if statistics:
        text = render_statistics(report, RenderOptions(color=color)) if fmt == "text" else _statistics_json(report)
    elif fmt == "text" and quiet:  # findings only: no file grouping, notes or summary
        shown = report.results if show_suppressed else report.active
        text = "".join(format_finding(r, color=color, report=report) + "\n" for r in shown)
    else:
        text = render(report, fmt, color=color, show_suppressed=show_suppressed)
    for other, file in reports:  # --output FORMAT:FILE, each the whole report in its format
        write_file(file, render(report, other))
    if output is not None:
        write_file(output, text)
        if not quiet:
            click.echo(summary_line(report), err=True)
    else:
        echo(text, nl=False)
        if fmt != "text" and not quiet and sys.stderr.isatty():
            click.echo(summary_line(report), err=True)
    if fmt == "text" and output is None and not (quiet or statistics) and sys.stdout.isatty():
        _more_than_a_screen(len(report.active))

    raise click.exceptions.Exit(EXIT_FINDINGS if report.failing() else EXIT_CLEAN)  # over every project


def _outputs(values: tuple[str, ...]) -> tuple[Path | None, list[tuple[str, Path]]]:
    """``-o FILE`` (the report of --format, at most one) and the ``--output FORMAT:FILE`` reports.
    A value is FORMAT:FILE when it starts with a format's name and a colon (a file whose name
    starts so is written ./json:x)."""
    plain: list[Path] = []
    reports: list[tuple[str, Path]] = []
    for value in values:
        fmt, colon, file = value.partition(":")
        if colon and fmt in FORMATS:
            if not file:
                raise _fail(f"--output {value}: no file after the format (--output {fmt}:FILE)")
            reports.append((fmt, Path(file)))
        else:
            plain.append(Path(value))
    if len(plain) > 1:
        raise _fail(f"-o/--output FILE given {len(plain)} times ({', '.join(map(str, plain))}): the report of "
                    "--format goes to one file; name the others FORMAT:FILE (--output sarif:x.sarif)")
    files = [*plain, *(file for _, file in reports)]
    seen: set[str] = set()
    for file in files:
        key = os.path.normpath(file)
        if key in seen:
            raise _fail(f"--output names {file} twice: each report needs its own file")
        seen.add(key)
        if file.is_dir():
            raise _fail(f"--output {file}: is a folder, not a file")
    return (plain[0] if plain else None), reports


def _show_diff(outcome, output: Path | None, quiet: bool) -> None:
    """``--diff``: the diff on stdout (or in -o FILE), what it would fix on stderr, notes too;
    exit 1 when there is a diff, 0 when --fix would change nothing."""
    from mlops_lint.fix.run import unified_diff
    from mlops_lint.output import echo, write_file
    from mlops_lint.report.text import format_note

    text = unified_diff(outcome.changed)
    if output is not None:
        write_file(output, text)
    else:
        echo(text, nl=False)
    if not quiet:
        for note in outcome.notes:
            click.echo(format_note(note), err=True)
        count = sum(outcome.fixed.values())
        files = len(outcome.changed)
        click.echo(f"mlops-lint: would fix {count} problem{'s' if count != 1 else ''} in {files} "
                   f"file{'s' if files != 1 else ''}" if count else "mlops-lint: no fix to apply", err=True)
    raise click.exceptions.Exit(EXIT_FINDINGS if outcome.changed else EXIT_CLEAN)


def _statistics_json(report) -> str:
    from mlops_lint.report.text import statistics

    rows = [{"rule": rule, "slug": slug, "severity": severity, "count": count}
            for count, rule, slug, severity in statistics(report)]
    if report.fixed is not None:  # a --fix run: each rule's fixes, rules fixed entirely included
        metas = {meta.code: meta for meta in report.rules}
        for row in rows:
            row["fixed"] = report.fixed.get(row["rule"], 0)
        listed = {row["rule"] for row in rows}
        rows.extend({"rule": rule, "slug": metas[rule].name, "severity": metas[rule].severity,
                     "count": 0, "fixed": count} for rule, count in sorted(report.fixed.items())
                    if rule not in listed and rule in metas)
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"


def _more_than_a_screen(findings: int) -> None:
    """After more findings than the terminal shows lines (``$LINES`` where set), a closing line
    on stderr that points at the per-rule counts (text on a terminal only: a file, a pipe or a
    CI log has no screen to overflow, and its bytes stay the report's)."""
    import shutil

    if findings > shutil.get_terminal_size().lines:
        click.echo(f"mlops-lint: {findings} findings, more than a screen: `--statistics` counts them per rule, "
                   "`--select RULE` shows one rule's", err=True)


@main.command("rules")
@click.option("--format", "fmt", type=click.Choice(("text", "json")), default="text", show_default=True)
def rules_command(fmt: str) -> None:
    """The catalogue: id, slug, severity, summary."""
    from mlops_lint.output import echo

    registry = _registry(_cache_dir(None, False))
    if fmt == "json":
        payload = [
            {"code": m.code, "slug": m.name, "severity": m.severity, "summary": m.summary, "scope": str(m.scope),
             "status": m.status, "since": m.since, "opt_in": m.opt_in, "options": {k: repr_type(v) for k, v in m.options.items()},
             "defaults": dict(m.defaults), "tags": list(m.tags), "family": m.family}
            for m in registry.rules
        ]
        echo(json.dumps(payload, indent=2, ensure_ascii=False))
        return
    width = max((len(m.name) for m in registry.rules), default=10)
    echo("".join(f"{meta.code}  {meta.name:<{width}}  {meta.severity[0].upper()}  {meta.summary}"
                 f"{' (opt-in)' if meta.opt_in else ''}\n" for meta in registry.rules), nl=False)


def repr_type(value: object) -> str:
    return getattr(value, "__name__", None) or str(value)


@main.command("explain")
@click.argument("rule")
def explain(rule: str) -> None:
    """Full docs of one rule (id or slug)."""
    from mlops_lint.output import echo

    registry = _registry(_cache_dir(None, False))
    meta = registry.get(rule)
    if meta is None:
        raise _fail(f"unknown rule {rule!r} (see `mlops-lint rules`)")
    from mlops_lint.report.ruledoc import explain_text

    echo(explain_text(meta))


@main.command("export-policies")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The config whose custom-rules to export (default: the one found from the current folder up).")
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), default=None,
              help="Write the YAML to this file instead of stdout.")
def export_policies(config_path: Path | None, output: Path | None) -> None:
    """Write the config's custom-rules as ValidatingAdmissionPolicy + Binding YAML (for kubectl apply)."""
    from mlops_lint.config import ConfigError, load_config
    from mlops_lint.custom import ExportError, export_text
    from mlops_lint.output import echo, write_file

    registry = _registry(_cache_dir(None, False))
    try:
        config = load_config(config_path, registry, start=Path.cwd() if config_path is None else None)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if not config.custom_rules:
        raise _fail(f"{config.path or 'no config found'}: no custom-rules to export")
    try:
        text = export_text(config)
    except ExportError as exc:
        raise _fail(str(exc)) from None
    if output is None:
        echo(text, nl=False)
    else:
        write_file(output, text)
        click.echo(f"mlops-lint: wrote {len(config.custom_rules)} policies with their bindings to {output}", err=True)


@main.command("server")
def server() -> None:
    """A language server over stdio, for editors (LSP; needs pygls: pip install "mlops-lint[lsp]")."""
    try:
        import pygls  # noqa: F401 - only to say what is missing
    except ImportError:
        raise _fail('the language server needs pygls: pip install "mlops-lint[lsp]"') from None
    _resume_collector()
    from mlops_lint.lsp.server import serve

    serve()


@main.command("init")
@click.argument("folder", required=False, type=click.Path(file_okay=False, path_type=Path), default=Path("."))
@click.option("--force", is_flag=True, help="Write it even when a config already applies (replacing .mlops-lint.yaml).")
def init(folder: Path, force: bool) -> None:
    """Write a commented .mlops-lint.yaml (refused when a config already applies there)."""
    from mlops_lint.config import ConfigError, write_init

    try:
        target = write_init(folder, force=force)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    click.echo(f"mlops-lint: wrote {target}", err=True)


if __name__ == "__main__":  # python -m mlops_lint.cli
    main()
