"""Ownership of entries in the shared HoloDeck global config: the ledger in MCPSYNC_STATE_DIR.

The global file (~/.holodeck/config.yaml) is shared by every project on the machine and by the
user's hand edits. sync changes only the entries its ledger says this project wrote.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from project_helpers import age, snapshot
from sync_helpers import SERVERS, Project, make_project

from mcpsync.sync.ownership import Ledger, claim

DEFAULT_GLOBAL = """
    [[targets]]
    kind = "holodeck-global"
    """

USER_CONFIG = (
    "# my HoloDeck settings\n"
    "mcp_servers:\n"
    "  - name: mine  # written by hand\n"
    "    description: My own server\n"
    "    type: mcp\n"
    "    command: npx\n"
    '    args: ["-y", "mine-mcp@1.0.0"]\n'
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return make_project(tmp_path, monkeypatch)


def global_file(project: Project) -> Path:
    return project.home / ".holodeck" / "config.yaml"


def entries(project: Project) -> dict[str, Any]:
    data = yaml.safe_load(global_file(project).read_text(encoding="utf-8"))
    return {e["name"]: e for e in data["mcp_servers"]}


def setup(project: Project, *aliases: str, agent: bool = False) -> None:
    targets = [DEFAULT_GLOBAL]
    if agent:
        project.write("agents/a/agent.yaml", "name: a\n")
        targets.append('[[targets]]\nkind = "holodeck-agent"\npath = "agents/*/agent.yaml"\n')
    project.manifest(*(SERVERS[a] for a in aliases), *targets)
    project.lock()


def owners(project: Project) -> dict[str, list[str]]:
    """The ledger's owners of the global file, by project directory name."""
    real = os.path.realpath(global_file(project))
    return {Path(p).parent.name: names for p, names in project.ledger()["files"][real].items()}


def test_two_projects_share_the_global_file(project: Project) -> None:
    global_file(project).parent.mkdir()
    global_file(project).write_text(USER_CONFIG)
    a, b = project, project.sibling("other")
    setup(a, "files", "notes")
    setup(b, "weather", "search")
    assert a.sync().code == 0
    assert b.sync().code == 0
    assert list(entries(a)) == ["mine", "files", "notes", "search", "weather"]
    assert owners(a) == {"proj": ["files", "notes"], "other": ["search", "weather"]}
    assert a.sync("--check").code == 0
    assert b.sync("--check").code == 0

    # a drops `notes`: only its own entry goes; b's entries and the user's stay
    setup(a, "files")
    assert a.sync().code == 0
    assert list(entries(a)) == ["mine", "files", "search", "weather"]
    assert owners(a) == {"proj": ["files"], "other": ["search", "weather"]}
    assert b.sync("--check").code == 0
    assert global_file(a).read_text().startswith(USER_CONFIG)


def test_default_location_prefers_config_yml(project: Project) -> None:
    yml = project.home / ".holodeck" / "config.yml"
    yml.parent.mkdir()
    yml.write_text("mcp_servers: []\n")
    setup(project, "notes")
    assert project.sync().code == 0
    assert not global_file(project).exists()
    assert [e["name"] for e in yaml.safe_load(yml.read_text())["mcp_servers"]] == ["notes"]


def test_missing_global_file_is_created(project: Project) -> None:
    setup(project, "notes")
    result = project.sync()
    assert result.code == 0, result.text
    assert f"Created {global_file(project)}" in result.err
    assert list(entries(project)) == ["notes"]


def test_user_entry_with_our_name_is_refused_and_nothing_is_written(project: Project) -> None:
    global_file(project).parent.mkdir()
    global_file(project).write_text(USER_CONFIG.replace("name: mine", "name: notes"))
    setup(project, "notes", agent=True)
    files = [global_file(project), project.path("agents/a/agent.yaml")]
    age(files)
    before = snapshot(files)
    result = project.sync()
    assert result.code == 2
    assert result.err.startswith(
        f"error: {global_file(project)}: entry 'notes' belongs to you (not written by mcpsync); "
        "holodeck-global (target #1) will not overwrite it. File not modified.\n"
        "  hint: rename the server's alias in mcp.toml, or remove 'notes' from "
    )
    assert snapshot(files) == before  # the agent file of the same run is not written either
    assert not project.state.exists()


def test_other_projects_entry_with_our_name_is_refused(project: Project) -> None:
    a, b = project, project.sibling("other")
    setup(a, "notes")
    assert a.sync().code == 0
    b.manifest(SERVERS["notes"].replace("1.4.2", "2.0.0"), DEFAULT_GLOBAL)
    b.lock()
    files = [global_file(a), a.state / "owners.json"]  # a's entry and a's claim on it
    age(files)
    before = snapshot(files)
    result = b.sync()
    assert result.code == 2
    assert f"entry 'notes' belongs to project {a.root}, which writes a different value" in (
        result.err
    )
    assert snapshot(files) == before


def test_identical_entry_is_shared_and_stays_until_the_last_project_drops_it(
    project: Project,
) -> None:
    a, b = project, project.sibling("other")
    setup(a, "notes", "files")
    setup(b, "notes")
    assert a.sync().code == 0
    assert b.sync().code == 0
    assert owners(a) == {"proj": ["files", "notes"], "other": ["notes"]}
    setup(a, "files")
    assert a.sync().code == 0
    assert list(entries(a)) == ["files", "notes"]  # b still wants it
    assert b.sync("--check").code == 0
    setup(b)
    assert b.sync().code == 0
    assert list(entries(a)) == ["files"]


def test_shared_entry_is_not_changed_under_the_other_project(project: Project) -> None:
    a, b = project, project.sibling("other")
    setup(a, "notes")
    setup(b, "notes")
    assert a.sync().code == 0 and b.sync().code == 0
    a.manifest(SERVERS["notes"].replace("1.4.2", "2.0.0"), DEFAULT_GLOBAL)
    a.lock()
    result = a.sync()
    assert result.code == 2
    assert f"belongs to project {b.root}" in result.err
    assert b.sync("--check").code == 0


def test_entries_of_a_deleted_project_can_be_taken_over(project: Project) -> None:
    a, b = project, project.sibling("other")
    setup(b, "notes")
    assert b.sync().code == 0
    b.path("mcp.toml").unlink()
    a.manifest(SERVERS["notes"].replace("1.4.2", "2.0.0"), DEFAULT_GLOBAL)
    a.lock()
    result = a.sync()
    assert result.code == 0, result.text
    assert entries(a)["notes"]["args"] == ["acme-notes-mcp==2.0.0"]


def test_dropped_server_is_removed_on_next_sync(project: Project) -> None:
    global_file(project).parent.mkdir()
    global_file(project).write_text(USER_CONFIG)
    setup(project, "notes", "files")
    assert project.sync().code == 0
    setup(project, "files")
    assert project.sync().code == 0
    assert list(entries(project)) == ["mine", "files"]
    setup(project)
    assert project.sync().code == 0
    assert global_file(project).read_text() == USER_CONFIG
    assert project.ledger()["files"] == {}


def test_lost_ledger_with_identical_entries_is_adopted(project: Project) -> None:
    setup(project, "notes", "files")
    assert project.sync().code == 0
    (project.state / "owners.json").unlink()
    before = snapshot([global_file(project)])
    result = project.sync()
    assert result.code == 0, result.text
    assert snapshot([global_file(project)]) == before
    assert owners(project) == {"proj": ["files", "notes"]}
    setup(project, "files")  # adopted entries are ours again: removal works
    assert project.sync().code == 0
    assert list(entries(project)) == ["files"]


def test_lost_ledger_with_changed_entries_is_refused(project: Project) -> None:
    # Without the ledger an entry that differs cannot be told from the user's own.
    setup(project, "notes")
    assert project.sync().code == 0
    (project.state / "owners.json").unlink()
    project.manifest(SERVERS["notes"].replace("1.4.2", "2.0.0"), DEFAULT_GLOBAL)
    project.lock()
    result = project.sync()
    assert result.code == 2
    assert "entry 'notes' belongs to you (not written by mcpsync)" in result.err


def test_hand_edit_of_our_entry_is_drift_and_sync_repairs_it(project: Project) -> None:
    setup(project, "notes")
    assert project.sync().code == 0
    path = global_file(project)
    path.write_text(path.read_text().replace("Team notes", "edited by hand"))
    result = project.sync("--check")
    assert result.code == 1
    assert str(path) in result.err
    assert project.sync().code == 0
    assert entries(project)["notes"]["description"] == "Team notes"


def test_symlinked_global_file_is_recorded_by_its_real_path(project: Project) -> None:
    real = project.home / "dotfiles" / "holodeck.yaml"
    real.parent.mkdir()
    real.write_text(USER_CONFIG)
    global_file(project).parent.mkdir()
    global_file(project).symlink_to(real)
    setup(project, "notes")
    assert project.sync().code == 0
    assert global_file(project).is_symlink()
    assert list(project.ledger()["files"]) == [str(real.resolve())]
    assert "name: notes" in real.read_text()


def test_corrupt_ledger_is_an_input_error(project: Project) -> None:
    setup(project, "notes")
    project.state.mkdir()
    (project.state / "owners.json").write_text("{not json")
    result = project.sync()
    assert result.code == 2
    assert "Invalid ownership ledger" in result.err and "File not modified." in result.err
    assert (project.state / "owners.json").read_bytes() == b"{not json"
    assert not global_file(project).exists()


def test_check_and_dry_run_do_not_write_the_ledger(project: Project) -> None:
    setup(project, "notes")
    assert project.sync("--check").code == 1
    assert project.sync("--dry-run").code == 0
    assert not project.state.exists()


# --- claim() directly ----------------------------------------------------------------------


def test_claim_rules(tmp_path: Path) -> None:
    me, other, gone = tmp_path / "me.toml", tmp_path / "other.toml", tmp_path / "gone.toml"
    me.touch()
    other.touch()
    config = tmp_path / "config.yaml"
    ledger = Ledger(tmp_path / "owners.json")
    ledger.record(config, str(me), ["mine_old", "both", "changed"])
    ledger.record(config, str(other), ["both", "theirs"])
    ledger.record(config, str(gone), ["abandoned"])
    existing = {
        "user": 1,
        "mine_old": 1,
        "both": 1,
        "changed": 1,
        "theirs": 1,
        "abandoned": 1,
        "same": 2,
    }
    new = {"changed": 2, "abandoned": 2, "same": 2, "fresh": 1}
    managed = claim(ledger, config, str(me), existing, new, "t")
    # replace our changed entry, take over the abandoned one, adopt the identical one,
    # remove our dropped entry; keep `both` (other still wants it), the user's and theirs
    assert managed == {"changed", "abandoned", "same", "mine_old"}
    with pytest.raises(Exception, match="'user' belongs to you"):
        claim(ledger, config, str(me), existing, {"user": 2}, "t")
    with pytest.raises(Exception, match="'theirs' belongs to project"):
        claim(ledger, config, str(me), existing, {"theirs": 2}, "t")
