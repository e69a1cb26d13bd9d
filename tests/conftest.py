"""Fixtures shared by the test packages.

``browser``: Debian's headless Chromium driven by Playwright, one per test module, for every
package that looks at a page (the viewer's, the rendered images'). One fixture for all, so
two instances never overlap (Playwright's sync API cannot start a second instance in a process
whose first is still running), and module-scoped, so it stops before the next module: while
it runs, the sync API holds an event loop in the main thread, and a later test's
``asyncio.run`` would fail. Skipped, with the install step, when either is missing.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium driven by Playwright (skipped when either is missing)."""
    from view.conftest import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: `make test` installs it as root (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()
