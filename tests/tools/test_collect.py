"""`PathCollector.add_ordered` keeps what `add` keeps for files that arrive oldest first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dsh_fs.discovery._collect import PathCollector

paths = st.lists(
    st.builds(
        lambda top, rest: f"{top}/{rest}" if rest else top,
        st.sampled_from(["a", "b", "c", "d", "e", "f"]),
        st.sampled_from(["", "x", "y/z", "w"]),
    ),
    max_size=40,
)


@given(found=paths, limit=st.integers(min_value=1, max_value=8), cut=st.integers(0, 40))
def test_adding_in_order_samples_exactly_as_adding_with_ranks(
    found: list[str], limit: int, cut: int
) -> None:
    ranked = PathCollector(limit)
    for rank, path in enumerate(found, start=1):
        ranked.add(path, rank)
    ordered = PathCollector(limit)
    ordered.add_ordered(found[:cut])
    ordered.add_ordered(found[cut:])
    assert ordered.sample() == ranked.sample()
    assert ordered.total == ranked.total == len(found)


def test_adding_in_order_samples_round_robin_oldest_first() -> None:
    found = PathCollector(3)
    found.add_ordered(["v/a", "v/b", "v/c"])
    found.add_ordered(["v/d", "src/e", "guide/f", "late/g"])
    assert found.sample() == (["v/a", "src/e", "guide/f"], 3, 4)
