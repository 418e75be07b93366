"""The held-out real cases (issue 25): no call succeeds and no byte changes. The score is
reported by ``python -m edit_recovery.real``, not asserted here."""

from __future__ import annotations

from edit_recovery.real import judge_all, load_cases


def test_the_real_cases_never_edit_and_never_change_a_byte() -> None:
    verdicts = judge_all()
    assert verdicts
    assert [v.case.id for v in verdicts if v.kind == "wrong-edit"] == []
    assert not any(v.changed for v in verdicts)


def test_every_real_case_is_well_formed() -> None:
    cases = load_cases()
    assert {case.set for case in cases} == {"first", "second"}
    for case in cases:
        lines = case.file_text.splitlines()
        assert 1 <= case.start <= case.end <= len(lines), case.id
        assert case.old_string not in case.file_text, case.id
        assert case.provenance["source"], case.id
        assert case.provenance["path"], case.id
