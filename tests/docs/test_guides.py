"""The guides show the example files as they are: their code is in the Markdown itself (so a
page reads on a forge) and every such block equals the file or section it names."""

from __future__ import annotations

import re
from pathlib import Path

from .example_blocks import example_blocks, example_text
from .test_examples import EXAMPLES, PACKAGE, example_scripts

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def included_files(page: Path) -> set[str]:
    """Paths (relative to the repository) whose code ``page`` shows in example blocks."""
    return {path for path, _, _ in example_blocks(page)}


def test_every_example_block_equals_the_code_it_names():
    pages = sorted(DOCS.rglob("*.md"))
    blocks = [(page, *block) for page in pages for block in example_blocks(page)]
    assert len(blocks) >= 36
    for page, path, section, shown in blocks:
        where = f"{page.relative_to(ROOT)} shows {path}{':' + section if section else ''}"
        assert shown == example_text(path, section), f"{where}: the block differs from the file"
    for page in pages:  # no include left: the code must be readable in the Markdown
        assert "--8<--" not in page.read_text(), page


def test_first_scenario_guide_shows_every_file_of_the_example_package():
    shown = included_files(DOCS / "guides" / "first-scenario.md")
    package_files = {
        p.relative_to(ROOT).as_posix()
        for p in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.yaml"), PACKAGE / "pyproject.toml"]
        if p.read_text().strip() and "egg-info" not in p.as_posix() and "/build/" not in p.as_posix()
    }
    assert package_files == shown
    page = (DOCS / "guides" / "first-scenario.md").read_text()
    for command in ("magma scenarios show my_cubes", "magma test-tools my_cubes.SwitchAndPlace",
                    "magma run my_cubes.SwitchAndPlace --agent trace",
                    "magma scenarios test-requests my_cubes.Shuffle",
                    "magma run my_cubes.Shuffle --episodes 4 --slots 2 --randomized"):
        assert command in page


def test_every_example_script_is_shown_by_a_page():
    shown = set().union(*(included_files(p) for p in DOCS.rglob("*.md")))
    for script in example_scripts(opt_in=True):
        assert script.relative_to(ROOT).as_posix() in shown, f"no page shows {script}"


def test_every_example_module_is_used():
    """Helper modules of the examples (no ``__main__``) are imported by some script."""
    scripts = example_scripts(opt_in=True)
    sources = "\n".join(p.read_text() for p in scripts)
    for module in EXAMPLES.rglob("*.py"):
        if PACKAGE in module.parents or module in scripts:
            continue
        assert re.search(rf"^from {module.stem} import", sources, re.M), module


def test_the_sections_that_left_the_readme_live_in_the_guides():
    """What the README used to hold (agents, models, definitions, viewer, 2.0) is in a page."""
    guides = DOCS / "guides"
    agents = (guides / "running-agents.md").read_text()
    for text in ("--chat_format chatml-function-calling", "--report-role user", "--agent-config",
                 "--concurrency C", "--batch-window", "--schedule lockstep", "make test-real-model"):
        assert text in agents, text
    generated = (guides / "generated-tasks.md").read_text()
    assert "--randomized" in generated and "magma scenarios test-requests" in generated
    assert "examples/tasks/freeze_task.py" in included_files(guides / "generated-tasks.md")
    assert "## Rules worth knowing" in (guides / "from-magma-2.md").read_text()
    assert "tests/fixtures/magma2_style_scenarios" in (guides / "from-magma-2.md").read_text()
    viewer = (guides / "viewer.md").read_text()
    pictures = set(re.findall(r"\]\(\.\./images/([^)]+)\)", viewer))
    assert pictures == {p.name for p in (DOCS / "images").glob("viewer-*.png")}
    assert "magma runs video" in viewer and "make screenshots" in viewer
    started = (ROOT / "docs" / "getting-started.md").read_text()
    assert "`buttons.Sequence`" in started and "`sorting.LongSorting`" in started
    skills = (DOCS / "guides" / "skills.md").read_text()
    assert "cancel_current_action" in skills and "--skills all" in skills
    bench = (DOCS / "guides" / "benchmarking.md").read_text()
    assert "magma bench compile smoke" in bench and "](../bench-report.png)" in bench
    assert (DOCS / "bench-report.png").is_file()


def test_the_stages_guide_lists_every_built_in_goal_with_its_arguments():
    """Each goal ``magma_core.simulation.goals`` exports has a row ``Name(arg, ..., kw=default)``
    written from its constructor's signature, and the page gives the import path."""
    import inspect

    from magma_core.simulation import goals

    page = (DOCS / "guides" / "stages.md").read_text()
    assert "from magma_core.simulation.goals import" in page
    for name in goals.__all__:
        cls = getattr(goals, name)
        if not isinstance(cls, type) or name == "BaseGoal":
            continue
        params = [p for p in inspect.signature(cls).parameters.values()
                  if p.kind is p.POSITIONAL_OR_KEYWORD]
        shown = ", ".join(p.name if p.default in (p.empty, None) else f"{p.name}={p.default!r}"
                          for p in params)  # At's None defaults only serve its keyword aliases
        assert f"| `{name}({shown})` |" in page, f"stages.md lists no `{name}({shown})`"


def test_scenario_authors_find_values_from_motion_tools_and_the_scaffold():
    tools = (DOCS / "guides" / "tools.md").read_text()
    assert '"values_from": "objects"' in tools and "## A motion tool from scratch" in tools
    assert "examples/tools/motion_tool.py" in included_files(DOCS / "guides" / "tools.md")
    readme = (ROOT / "README.md").read_text()
    assert "magma new scenario" in readme
    first = (DOCS / "guides" / "first-scenario.md").read_text()
    assert "tools.md#a-motion-tool-from-scratch" in first  # not "read the source"
    from magma_core.simulation.stage import StageGlobalParameters, TextOnlyValidationMode

    stages = (DOCS / "guides" / "stages.md").read_text()
    assert "text_only_validation=TextOnlyValidationMode.SAY_ONLY" in stages
    assert StageGlobalParameters(verification_prompt="x", text_only_validation=(
        TextOnlyValidationMode.SAY_ONLY)).text_only_validation.name == "SAY_ONLY"
