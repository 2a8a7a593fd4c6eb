'use strict'
// kafkajs producer as a JSON-RPC server on stdin/stdout.  Usage: node producer.js BOOTSTRAP
// op "send" {topic, messages: [{key, value, partition?}]} (keys unique within a call) -> [{key, partition, offset}]
// for every message in input order. All messages go in one producer.send (one Produce request per broker, one batch
// per partition); see common.js `acknowledged` for how each record's offset is known.
const { makeKafka, serveRpc, emit, errorText, recordingPartitioner, acknowledged } = require('./common')

async function main() {
  const chosen = new Map() // key -> partition
  const producer = makeKafka(process.argv[2], 'e2e-producer').producer({
    allowAutoTopicCreation: false,
    createPartitioner: recordingPartitioner(chosen),
  })
  await producer.connect()
  serveRpc(
    {
      send: async ({ topic, messages }) => {
        chosen.clear()
        return acknowledged(messages, await producer.send({ topic, acks: -1, messages }), chosen)
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
