'use strict'
// A kafkajs transactional producer as a JSON-RPC server on stdin/stdout: the producing half of a
// consume-transform-produce pipeline (the consuming half is a consumer.js with autoCommit false).
// Usage: node transactional.js BOOTSTRAP TRANSACTIONAL_ID
// "ready" is printed once connect() returned, that is once InitProducerId answered for the transactional id.
// op "transaction" {topic, messages: [{key, value}], group, offsets: {topic, partitions: [{partition, offset}]},
//   commit} -> [{key, partition, offset}] of the messages, in input order (common.js `acknowledged`): one
//   producer.transaction(), one send, transaction.sendOffsets({consumerGroupId, topics}), then commit() or abort().
const { makeKafka, serveRpc, emit, errorText, recordingPartitioner, acknowledged } = require('./common')

const TRANSACTION_TIMEOUT_MS = 60000

async function main() {
  const [bootstrap, transactionalId] = process.argv.slice(2)
  const chosen = new Map() // key -> partition
  const producer = makeKafka(bootstrap, `e2e-${transactionalId}`).producer({
    transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: TRANSACTION_TIMEOUT_MS,
    allowAutoTopicCreation: false,
    createPartitioner: recordingPartitioner(chosen),
  })
  await producer.connect()
  serveRpc(
    {
      transaction: async ({ topic, messages, group, offsets, commit }) => {
        chosen.clear()
        const transaction = await producer.transaction()
        try {
          const produced = acknowledged(messages, await transaction.send({ topic, acks: -1, messages }), chosen)
          await transaction.sendOffsets({ consumerGroupId: group, topics: [offsets] })
          await (commit ? transaction.commit() : transaction.abort())
          return produced
        } catch (e) {
          if (transaction.isActive()) await transaction.abort()
          throw e
        }
      },
    },
    () => producer.disconnect()
  )
  emit({ event: 'ready' })
}

main().catch(e => {
  emit({ event: 'fatal', error: errorText(e) })
  process.exit(1)
})
