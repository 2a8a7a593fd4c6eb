'use strict'
// kafkajs over a secured listener (SSL, SASL_PLAINTEXT, SASL_SSL): produce FIRST records, a consumer of the group reads them all, commits and
// leaves; produce LATER more, a new consumer of the same group resumes at the commit. Prints one JSON line:
// {"first": [...values], "resumed": [...values]} (or {"error": ...}).
// args: bootstrap topic group security first later
// security: JSON {"ssl": {"ca": file, "cert": file, "key": file} (optional), "sasl": kafkajs's sasl object (optional;
// {"mechanism": "oauthbearer", "token": jws} becomes an oauthBearerProvider handing out that token)}
const fs = require('fs')
const { Kafka, Partitioners, logLevel } = require('kafkajs')

const [bootstrap, topic, group, securityJson, first, later] = process.argv.slice(2)
const security = JSON.parse(securityJson)
const ssl = security.ssl && {
  ca: [fs.readFileSync(security.ssl.ca)],
  ...(security.ssl.cert && { cert: fs.readFileSync(security.ssl.cert), key: fs.readFileSync(security.ssl.key) }),
}
const kafka = new Kafka({
  clientId: 'secure-roundtrip',
  brokers: bootstrap.split(','),
  ssl,
  sasl: security.sasl && security.sasl.mechanism === 'oauthbearer'
    ? { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: security.sasl.token }) }
    : security.sasl,
  logLevel: logLevel.WARN,
  logCreator: () => ({ label, log }) => process.stderr.write(`${label} ${JSON.stringify(log)}\n`),
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
})

async function produce(values) {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner })
  await producer.connect()
  await producer.send({ topic, messages: values.map((value) => ({ value })) })
  await producer.disconnect()
}

// Consume until `count` values arrived, commit them, leave the group.
async function consume(count) {
  const consumer = kafka.consumer({ groupId: group })
  const received = []
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await new Promise((resolve, reject) => {
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        received.push(message.value.toString())
        await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }])
        if (received.length >= count) resolve()
      },
    }).catch(reject)
  })
  await consumer.disconnect()
  return received
}

async function main() {
  const firstValues = first.split(',')
  const laterValues = later.split(',')
  await produce(firstValues)
  const got = await consume(firstValues.length)
  await produce(laterValues)
  const resumed = await consume(laterValues.length)
  process.stdout.write(JSON.stringify({ first: got, resumed }) + '\n')
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stdout.write(JSON.stringify({ error: `${e && e.name}: ${e && e.message}` }) + '\n')
    process.exit(1)
  },
)
