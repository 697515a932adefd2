"""Shared pytest options: ``--update-golden`` rewrites golden files instead of comparing them.

Review the result with ``git diff fixtures/`` before committing, as with ``cargo insta review``.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite fixtures/rules/*/expected.txt from the current output instead of comparing",
    )


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))
