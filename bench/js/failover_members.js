'use strict'
// The kafkajs column of `python -m bench failover` (bench/bench_failover.py): MEMBERS consumers of one group in one
// Node process, with kafkajs's default client and consumer settings (only fromBeginning, i.e. earliest). Each record
// consumed is reported on stdout as one line `{"member": i, "sentAt": s}` (the feed's 8-byte big-endian send time).
// A consumer that crashes is restarted by kafkajs itself (its default restartOnFailure). SIGTERM or closing stdin
// disconnects every consumer and exits 0.
// Usage: node failover_members.js BOOTSTRAP TOPIC GROUP MEMBERS
const { Kafka, logLevel } = require('kafkajs')

async function main() {
  const [bootstrap, topic, group, count] = process.argv.slice(2)
  const kafka = new Kafka({ clientId: 'bench-failover', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING })
  const consumers = []
  let stopping = null
  const stop = () => {
    if (!stopping) {
      stopping = Promise.allSettled(consumers.map(c => c.disconnect())).then(() => process.exit(0))
    }
    return stopping
  }
  process.on('SIGTERM', stop)
  process.stdin.on('end', stop)
  process.stdin.resume()
  for (let member = 0; member < Number(count); member++) {
    const consumer = kafka.consumer({ groupId: group })
    consumers.push(consumer)
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        process.stdout.write(JSON.stringify({ member, sentAt: message.value.readDoubleBE(0) }) + '\n')
      },
    })
  }
}

main().catch(e => {
  process.stderr.write(`${e && e.name}: ${e && e.message}\n`)
  process.exit(1)
})
