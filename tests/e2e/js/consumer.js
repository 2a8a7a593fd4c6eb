'use strict'
// One kafkajs group member, reporting on stdout one JSON line per event:
//   {"event":"joined", memberId, leaderId, isLeader, assignment: {topic: [partitions]}}   (GROUP_JOIN)
//   {"event":"message", partition, offset, key, value}                                   (eachMessage)
//   {"event":"committed", memberId, generationId, offsets: [{partition, offset}]}       (COMMIT_OFFSETS)
//   {"event":"crash", error} / {"event":"stopped"}
// Usage: node consumer.js BOOTSTRAP '{"group":..., "topic":..., "clientId":..., "autoCommit":..., ...consumer options}'
// (autoCommit, default true, is consumer.run's; readUncommitted, default false = read_committed, a consumer option)
// SIGTERM, SIGINT or closing stdin stops it cleanly: consumer.disconnect() finishes the batch in hand, commits
// and sends LeaveGroup, then "stopped" is printed and the process exits 0.
const { makeKafka, emit, errorText } = require('./common')

async function main() {
  const [bootstrap, optionsJson] = process.argv.slice(2)
  const { group, topic, clientId, fromBeginning = true, autoCommit = true, ...options } = JSON.parse(optionsJson)
  const consumer = makeKafka(bootstrap, clientId || 'e2e-consumer').consumer({
    groupId: group,
    sessionTimeout: 6000,
    heartbeatInterval: 1000,
    maxWaitTimeInMs: 500,
    metadataMaxAge: 2000,
    ...options,
  })
  const { GROUP_JOIN, COMMIT_OFFSETS, CRASH } = consumer.events
  consumer.on(GROUP_JOIN, ({ payload }) =>
    emit({
      event: 'joined',
      memberId: payload.memberId,
      leaderId: payload.leaderId,
      isLeader: payload.isLeader,
      assignment: payload.memberAssignment,
    })
  )
  consumer.on(COMMIT_OFFSETS, ({ payload }) =>
    emit({
      event: 'committed',
      memberId: payload.memberId,
      generationId: payload.groupGenerationId,
      offsets: payload.topics
        .filter(t => t.topic === topic)
        .flatMap(t => t.partitions.map(p => ({ partition: p.partition, offset: Number(p.offset) }))),
    })
  )
  consumer.on(CRASH, ({ payload }) => emit({ event: 'crash', error: errorText(payload.error) }))

  let stopping = null
  const stop = () => {
    if (!stopping) {
      stopping = consumer.disconnect().then(
        () => {
          emit({ event: 'stopped' })
          process.exit(0)
        },
        e => {
          emit({ event: 'crash', error: errorText(e) })
          process.exit(1)
        }
      )
    }
    return stopping
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
  process.stdin.on('end', stop)
  process.stdin.resume()

  await consumer.connect()
  await consumer.subscribe({ topics: [topic], fromBeginning })
  await consumer.run({
    autoCommit,
    eachMessage: async ({ partition, message }) => {
      const text = buffer => buffer && buffer.toString()
      emit({ event: 'message', partition, offset: Number(message.offset), key: text(message.key), value: text(message.value) })
    },
  })
  emit({ event: 'running' })
}

main().catch(e => {
  emit({ event: 'fatal', error: errorText(e) })
  process.exit(1)
})
