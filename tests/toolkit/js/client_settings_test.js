'use strict'
// kafkajs with the settings the pytest fixture hands out (`group_broker.client_settings.kafkajs()`): produce one
// record and read it back as a member of a group, over whatever the broker's listener speaks.
//
//   node tests/toolkit/js/client_settings_test.js <bootstrap> <topic> <group> <settings-json>
//
// Prints one JSON line: {"read": "<value>"} or {"error": "..."}. kafkajs's own log goes to stderr.
const { Kafka, Partitioners, logLevel } = require('kafkajs')

const [bootstrap, topic, groupId, settings] = process.argv.slice(2)
const kafka = new Kafka({
  ...JSON.parse(settings),
  clientId: 'kafkajs-settings',
  brokers: bootstrap.split(','),
  logLevel: logLevel.WARN,
  logCreator: () => ({ label, log }) => process.stderr.write(`${label} ${JSON.stringify(log)}\n`),
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
})

async function main() {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  await producer.send({ topic, messages: [{ value: 'over-tls' }] })
  await producer.disconnect()
  const consumer = kafka.consumer({ groupId })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const read = await new Promise((resolve, reject) => {
    consumer.run({ eachMessage: async ({ message }) => resolve(message.value.toString()) }).catch(reject)
  })
  await consumer.disconnect()
  return read
}

main().then(
  (read) => process.stdout.write(JSON.stringify({ read }) + '\n'),
  (error) => {
    process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + '\n')
    process.exitCode = 1
  },
)
