"""DescribeTopicPartitions' pages (broker.topic_pages), as Kafka 4.4's KRaftMetadataCache.describeTopicResponse cuts
them: no sockets, topics given as name -> partition count."""

from __future__ import annotations

from broker.topic_pages import Page, TopicSlice, page

TOPICS = {"a": 1, "b": 3, "c": 2}


def cut(names: list[str], limit: int, cursor: tuple[str, int] | None = None, skip_missing: bool = False) -> Page:
    def first(name: str) -> int:
        return cursor[1] if cursor is not None and name == cursor[0] else 0

    return page(names, TOPICS.get, first, limit, skip_missing=skip_missing)


def test_everything_fits_and_there_is_no_next_cursor() -> None:
    assert cut(["a", "b", "c"], 2000) == Page(
        [TopicSlice("a", range(1)), TopicSlice("b", range(3)), TopicSlice("c", range(2))], None
    )


def test_a_topic_cut_short_is_the_next_cursor_at_its_first_partition_left_out() -> None:
    assert cut(["a", "b", "c"], 2) == Page([TopicSlice("a", range(1)), TopicSlice("b", range(1))], ("b", 1))


def test_a_limit_used_up_exactly_at_a_topic_end_points_at_the_next_topic() -> None:
    assert cut(["a", "b", "c"], 4) == Page([TopicSlice("a", range(1)), TopicSlice("b", range(3))], ("c", 0))


def test_the_limit_used_up_by_the_last_topic_leaves_no_cursor() -> None:
    assert cut(["a"], 1) == Page([TopicSlice("a", range(1))], None)


def test_the_cursor_starts_its_own_topic_only() -> None:
    assert cut(["b", "c"], 3, cursor=("b", 2)) == Page([TopicSlice("b", range(2, 3)), TopicSlice("c", range(2))], None)


def test_a_cursor_past_a_topics_end_answers_it_without_partitions() -> None:
    assert cut(["b"], 10, cursor=("b", 7)) == Page([TopicSlice("b", range(7, 3))], None)
    assert list(range(7, 3)) == []


def test_a_missing_topic_named_is_answered_without_taking_room() -> None:
    assert cut(["a", "nope", "b"], 2) == Page(
        [TopicSlice("a", range(1)), TopicSlice("nope", None), TopicSlice("b", range(1))], ("b", 1)
    )


def test_a_missing_topic_is_left_out_when_every_topic_was_asked_for() -> None:
    assert cut(["a", "nope"], 5, skip_missing=True) == Page([TopicSlice("a", range(1))], None)


def test_a_missing_topic_after_the_limit_is_the_next_cursor_too() -> None:
    assert cut(["a", "nope"], 1) == Page([TopicSlice("a", range(1))], ("nope", 0))


def test_following_the_cursors_visits_every_partition_once() -> None:
    seen: list[tuple[str, int]] = []
    cursor: tuple[str, int] | None = ("a", 0)
    pages = 0
    while cursor is not None and pages < 10:  # bounded: a cursor that does not advance must fail, not hang
        names = sorted(name for name in TOPICS if name >= cursor[0])
        answer = cut(names, 2, cursor=cursor)
        seen += [(t.name, p) for t in answer.topics for p in t.partitions or ()]
        cursor = answer.next_cursor
        pages += 1
    assert (pages, cursor) == (3, None)
    assert seen == [(name, p) for name, count in sorted(TOPICS.items()) for p in range(count)]
