'use strict'
// kafkajs producer as a JSON-RPC server on stdin/stdout.  Usage: node producer.js BOOTSTRAP
// op "send" {topic, messages: [{key, value}]} (keys unique within a call) -> [{key, partition, offset}] for
// every message in input order. All messages go in one producer.send (one Produce request per broker, one batch
// per partition); kafkajs reports a base offset per partition, and within a partition the batch keeps the input
// order, so each record's offset is its partition's base offset plus its rank there.
const { Partitioners } = require('kafkajs')
const { makeKafka, serveRpc, emit, errorText } = require('./common')

async function main() {
  const chosen = new Map() // key -> partition, as decided by kafkajs's default (Java-compatible murmur2) partitioner
  const recordingPartitioner = () => {
    const partitioner = Partitioners.DefaultPartitioner()
    return args => {
      const partition = partitioner(args)
      chosen.set(String(args.message.key), partition)
      return partition
    }
  }
  const producer = makeKafka(process.argv[2], 'e2e-producer').producer({
    allowAutoTopicCreation: false,
    createPartitioner: recordingPartitioner,
  })
  await producer.connect()
  serveRpc(
    {
      send: async ({ topic, messages }) => {
        chosen.clear()
        const metadata = await producer.send({ topic, acks: -1, messages })
        const base = new Map()
        for (const meta of metadata) {
          if (meta.errorCode !== 0) throw new Error(`produce error ${meta.errorCode} on partition ${meta.partition}`)
          base.set(meta.partition, Number(meta.baseOffset))
        }
        const rank = new Map()
        return messages.map(({ key }) => {
          const partition = chosen.get(String(key))
          const index = rank.get(partition) || 0
          rank.set(partition, index + 1)
          return { key, partition, offset: base.get(partition) + index }
        })
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
