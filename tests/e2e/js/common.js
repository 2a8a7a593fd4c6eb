'use strict'
// Shared by the kafkajs scripts the Python end-to-end tests drive: stdout carries one JSON object per line and
// nothing else; kafkajs's own log lines go to stderr (the test keeps them in a file for failure reports).
const readline = require('readline')
const { Kafka, Partitioners, logLevel } = require('kafkajs')

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

function stderrLogCreator() {
  return ({ namespace, level, label, log }) => {
    const { message, ...extra } = log
    process.stderr.write(JSON.stringify({ level: label, namespace, message, ...extra }) + '\n')
  }
}

function makeKafka(bootstrap, clientId) {
  return new Kafka({
    clientId,
    brokers: bootstrap.split(','),
    logLevel: logLevel.INFO,
    logCreator: stderrLogCreator,
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
  })
}

function errorText(e) {
  return `${e && e.name}: ${e && e.message}`
}

// Line-oriented JSON RPC over stdin/stdout: {"id", "op", ...args} -> {"id", "result"} or {"id", "error"}.
// Requests are served one at a time, in order. Closing stdin (or SIGTERM/SIGINT) runs `shutdown` and exits 0.
function serveRpc(handlers, shutdown) {
  let queue = Promise.resolve()
  let closing = null
  const close = () => {
    if (!closing) {
      closing = queue.then(shutdown).then(
        () => process.exit(0),
        e => {
          process.stderr.write(`shutdown failed: ${errorText(e)}\n`)
          process.exit(1)
        }
      )
    }
    return closing
  }
  const rl = readline.createInterface({ input: process.stdin })
  rl.on('line', line => {
    if (!line.trim()) return
    const request = JSON.parse(line)
    queue = queue.then(async () => {
      const handler = handlers[request.op]
      try {
        if (!handler) throw new Error(`unknown op ${request.op}`)
        emit({ id: request.id, result: await handler(request) })
      } catch (e) {
        emit({ id: request.id, error: errorText(e) })
      }
    })
  })
  rl.on('close', close)
  process.on('SIGTERM', close)
  process.on('SIGINT', close)
}

// A `createPartitioner` for kafkajs producers that records, in `chosen` (key -> partition), where kafkajs's default
// (Java-compatible murmur2) partitioner put each message; a message's own `partition` field wins, as in kafkajs.
function recordingPartitioner(chosen) {
  return () => {
    const partitioner = Partitioners.DefaultPartitioner()
    return args => {
      const partition = partitioner(args)
      chosen.set(String(args.message.key), partition)
      return partition
    }
  }
}

// [{key, partition, offset}] for every message of one send (keys unique within it), in input order. kafkajs reports
// a base offset per partition, and within a partition the batch keeps the input order, so each record's offset is
// its partition's base offset plus its rank there.
function acknowledged(messages, metadata, chosen) {
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
}

module.exports = { emit, makeKafka, errorText, serveRpc, recordingPartitioner, acknowledged }
