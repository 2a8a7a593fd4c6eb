# test_billing.py — a complete example
import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import CommitFailedError


@pytest.mark.asyncio
async def test_billing_survives_a_rebalance_and_a_failed_commit(group_broker):
    admin = AIOKafkaAdminClient(bootstrap_servers=group_broker.bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic("orders", 4, 1)])
    await admin.close()

    consumer = AIOKafkaConsumer(
        "orders",
        bootstrap_servers=group_broker.bootstrap_servers,
        group_id="billing",
        session_timeout_ms=60_000,
        heartbeat_interval_ms=200,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        group = await group_broker.wait_for_group("billing", state="Stable", members=1)
        group_broker.force_rebalance("billing")  # or expire_member(...), advance(ms), move_coordinator(...)
        while group_broker.group("billing")["generation"] <= group["generation"]:
            await consumer.getmany(timeout_ms=50)  # the client rejoins inside poll

        group_broker.inject_error("OffsetCommit", "REBALANCE_IN_PROGRESS", group_id="billing")
        with pytest.raises(CommitFailedError):
            await consumer.commit({TopicPartition("orders", 0): 1})
        [failed] = group_broker.requests(api="OffsetCommit", group_id="billing")
        assert failed.error_codes == (27,)
    finally:
        await consumer.stop()
