'use strict'
// kafkajs as a consumer that lacks an ACL: subscribe to TOPIC in GROUP and run; print the first error kafkajs
// surfaces, as one JSON line {"name": ..., "type": ..., "retriable": ...} (or {"consumed": true} if it reads).
// args: bootstrap topic group
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, topic, group] = process.argv.slice(2)
const kafka = new Kafka({
  clientId: 'acl-denied',
  brokers: bootstrap.split(','),
  logLevel: logLevel.NOTHING,
  retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 2 },
})

function report(e) {
  const cause = e && (e.cause || e.originalError)
  const described = { name: e && e.name, type: e && e.type, retriable: e && e.retriable, message: e && e.message }
  if (cause) described.cause = { name: cause.name, type: cause.type }
  process.stdout.write(JSON.stringify(described) + '\n')
  process.exit(0)
}

async function main() {
  const consumer = kafka.consumer({ groupId: group, retry: { retries: 0 } })
  consumer.on(consumer.events.CRASH, ({ payload }) => report(payload.error))
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({
    eachMessage: async () => {
      process.stdout.write(JSON.stringify({ consumed: true }) + '\n')
      process.exit(0)
    },
  })
}

main().catch(report)
