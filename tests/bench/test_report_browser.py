"""The HTML report in a real headless Chromium: it loads offline and shows its plots and tables."""

import shutil
import subprocess

import pytest

from magma_core.bench.metrics import Trial, compute
from magma_core.bench.report import write_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _reports():
    def facts(item_id, condition, control=None):
        return {"item_id": item_id, "condition": condition, "control": control, "track": "in_domain",
                "length_bucket": "short", "lags": [0] if condition == "mission_update" else [],
                "stages": 3}
    a, u = facts("A.clean", "clean"), facts("A.upd", "mission_update", "A.clean")
    good = [Trial(a, k, "success", 3, 3) for k in range(3)] + [Trial(u, k, "success", 3, 3) for k in range(3)]
    weak = [Trial(a, k, "success", 3, 3) for k in range(3)] + [
        Trial(u, k, s, 1, 3) for k, s in enumerate(["success", "budget_exceeded", "non_requested_action"])]
    return {"good": compute(good, 3), "weak </script> agent": compute(weak, 3)}


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine: `make test` installs it as root (make chromium)")
def test_report_loads_in_headless_chromium(tmp_path):
    page = write_html(_reports(), tmp_path / "report.html")
    dom = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, check=True).stdout
    assert "<h1>MAGMA benchmark report</h1>" in dom
    for plot in ("plot-conditions", "plot-passk", "plot-length"):
        assert f'id="{plot}"' in dom
    assert dom.count('class="bar"') >= 4 and 'class="curve"' in dom
    assert dom.count("<table") >= 8 and 'id="statuses"' in dom
    assert "budget_exceeded" in dom
    # the embedded metrics survived a run name holding "</script>" (the page did not break)
    assert 'id="metrics"' in dom and "Usage and cost" in dom
    # the noise floor and the compare sentence; each run's failure reasons
    assert 'id="noise"' in dom and "Failure reasons: weak" in dom
    assert "weak &lt;/script&gt; agent vs good: -33.3 points over 6 paired trials" in dom
    assert "inside the noise floor" in dom
