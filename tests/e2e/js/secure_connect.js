'use strict'
// kafkajs connects a producer to a secured listener and prints one JSON line: {"connected": true} or
// {"name": <error class>, "message": <its message>}. args: bootstrap security (JSON, as secure_roundtrip.js reads it)
const fs = require('fs')
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, securityJson] = process.argv.slice(2)
const security = JSON.parse(securityJson)
const ssl = security.ssl && { ca: [fs.readFileSync(security.ssl.ca)] }
const kafka = new Kafka({
  clientId: 'secure-connect',
  brokers: bootstrap.split(','),
  ssl,
  sasl: security.sasl,
  logLevel: logLevel.NOTHING,
  retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 3 },
})

const producer = kafka.producer()
producer.connect().then(
  async () => {
    await producer.disconnect()
    process.stdout.write(JSON.stringify({ connected: true }) + '\n')
  },
  (e) => process.stdout.write(JSON.stringify({ name: e && e.name, message: e && e.message }) + '\n'),
)
