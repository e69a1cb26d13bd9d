"""Exporter plug-ins (entry-point group ``magma.export``) and the producer check; why a
preference export has no pairs."""

from __future__ import annotations

import json
import sys
import textwrap
from importlib import metadata

import pytest

from export.test_export import agent_input, call, forest
from magma_core.export import (
    Candidate,
    ExporterError,
    ExportForest,
    ExportSettings,
    Situation,
    available_formats,
    get_exporter,
    write_export,
)
from magma_core.export.preference_diagnosis import why_no_pairs
from magma_core.store import scores as sc


def test_the_builtin_formats_are_registered_as_entry_points():
    names = {ep.name: ep.value for ep in metadata.entry_points(group="magma.export")}
    assert names["chat-jsonl"] == "magma_core.export.builtin_formats:chat_jsonl"
    assert {"chat-jsonl", "preference-jsonl", "hf"} <= set(available_formats())
    assert get_exporter("preference-jsonl").stem == "preference"


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """An installed package (a dist-info folder on sys.path) registering ``shouty`` and a
    ``picky`` exporter that accepts only ``acme.agent`` >= 2."""
    site = tmp_path / "site"
    (site / "acme_export-1.0.dist-info").mkdir(parents=True)
    (site / "acme_export-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-export\nVersion: 1.0\n")
    (site / "acme_export-1.0.dist-info" / "entry_points.txt").write_text(textwrap.dedent("""\
        [magma.export]
        shouty = acme_export:make
        picky = acme_export:PICKY
        broken = acme_export:missing
        """))
    (site / "acme_export.py").write_text(textwrap.dedent("""\
        from magma_core.export import Exporter

        def rows(forest, settings, refused):
            out = []
            for key, c in sorted(forest.candidates.items()):
                if c.decision is None:
                    refused.append(key + ": no decision")
                    continue
                say = c.decision.get("say") or ",".join(t["name"] for t in c.decision["tool_calls"])
                out.append((forest.situations[c.situation].group, {"id": key, "text": say.upper()}))
            return out

        def make():
            return Exporter("shouty", rows, stem="shout")

        PICKY = Exporter("picky", rows, agent_ids=("acme.agent",), agent_versions=">=2")
        """))
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("acme_export", None)


def test_a_registered_renderer_is_found_by_name_and_writes_its_rows(plugin_package, tmp_path):
    assert {"shouty", "picky"} <= set(available_formats())
    report = write_export(forest(), ExportSettings(format="shouty", validation_ratio=0), tmp_path / "out")
    lines = [json.loads(line) for line in (tmp_path / "out" / "shout_train.jsonl").read_text().splitlines()]
    assert {r["text"] for r in lines} == {"PICK", "HM?", "PLACE"}
    assert report.rows == {"train": 4, "validation": 0}
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["exporter"] == "shouty"


def test_the_producer_must_be_one_the_exporter_accepts(plugin_package, tmp_path):
    f = forest()
    f.sources = [{"kind": "generation", "name": "g", "config": {"agent": "noisy-trace"}}]
    with pytest.raises(ExporterError, match="accepts data produced by acme.agent, not by magma.noisy_trace"):
        write_export(f, ExportSettings(format="picky"), tmp_path / "a")
    f.sources[0]["config"]["producer"] = {"agent_id": "acme.agent", "agent_version": "1.4"}
    with pytest.raises(ExporterError, match="versions >=2, the source was produced by version 1.4"):
        write_export(f, ExportSettings(format="picky"), tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()  # nothing written
    f.sources[0]["config"]["producer"]["agent_version"] = "2.1"
    assert write_export(f, ExportSettings(format="picky"), tmp_path / "c").rows["train"] >= 1


def test_unknown_and_broken_exporters_are_one_line(plugin_package):
    with pytest.raises(ExporterError, match="unknown export format 'nope': use one of .*shouty"):
        get_exporter("nope")
    with pytest.raises(ExporterError, match="exporter 'broken' .* cannot be loaded"):
        get_exporter("broken")


def _tied_forest() -> ExportForest:
    """s0: c1 pick -> s1 -> place (optimal); c2 a message -> s2 -> pick -> s3 -> place (optimal):
    the mistake is recovered from, both siblings score alike."""
    f = ExportForest(sources=[{"kind": "test"}])
    f.situations["s0"] = Situation("s0", "t", agent_input("user", "Put the cube in zone_a."))
    for n, parent in ((1, "c1"), (2, "c2"), (3, "c3")):
        f.situations[f"s{n}"] = Situation(f"s{n}", "t", agent_input("env", "ok"), parent)
    f.candidates["c1"] = Candidate("c1", "s0", 0, sc.ONGOING, call("pick", object="cube"), "s1")
    f.candidates["c2"] = Candidate("c2", "s0", 0, sc.ONGOING, {"say": "Not sure?", "tool_calls": []}, "s2")
    f.candidates["c3"] = Candidate("c3", "s2", 0, sc.ONGOING, call("pick", object="cube"), "s3")
    f.candidates["c4"] = Candidate("c4", "s1", 0, sc.OPTIMAL, call("place", area="zone_a"))
    f.candidates["c5"] = Candidate("c5", "s3", 0, sc.OPTIMAL, call("place", area="zone_a"))
    return f


def test_a_recovered_mistake_makes_no_pair_and_the_export_says_why(tmp_path):
    report = write_export(_tied_forest(), ExportSettings(format="preference-jsonl"), tmp_path / "p")
    assert report.rows == {"train": 0, "validation": 0}
    reason, = [w for w in report.warnings if w.startswith("no preference pairs")]
    assert "1 of 4 situations have siblings with different decisions" in reason
    assert "largest gap 0.000, at s0" in reason and "--preference-margin" in reason
    # a margin below zero accepts the tie: the pair (both orders) appears
    rows = write_export(_tied_forest(), ExportSettings(format="preference-jsonl", preference_margin=-0.01),
                        tmp_path / "q").rows
    assert rows["train"] + rows["validation"] == 2


def test_the_reason_names_a_forest_without_siblings():
    f = forest()
    del f.candidates["t0:c2"], f.candidates["t0:c4"]
    assert "none of the 2 situations has two usable candidates" in why_no_pairs(f, ExportSettings())


@pytest.mark.sim
def test_preference_export_of_a_run_says_why_on_the_command_line(tmp_path):
    workdir = tmp_path
    from cli.conftest import magma

    done = magma("run", "cube.PickPlace", "--agent", "trace", "--episodes", "1", "--out", "st",
                 "--name", "r", cwd=workdir)
    assert done.returncode == 0, done.stderr
    out = magma("export", "r", "--format", "preference-jsonl", "--out", "st", "--output", "ex", cwd=workdir)
    assert out.returncode == 0, out.stderr
    assert "warning: no preference pairs: none of the" in out.stderr
    bad = magma("export", "r", "--format", "csv", "--out", "st", cwd=workdir)
    assert bad.returncode == 2 and "unknown export format 'csv'" in bad.stderr
