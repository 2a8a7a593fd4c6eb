'use strict'
// A kafkajs consumer driven through group-broker's HTTP control API, with Node's built-in fetch.
//
//   node tests/toolkit/js/control_api_test.js <bootstrap> <control-url> <topic> <group>
//
// 1. the consumer joins the group (GROUP_JOIN #1);
// 2. POST /groups/<group>/rebalance: the coordinator starts a rebalance, kafkajs learns it from its next heartbeat
//    (REBALANCE_IN_PROGRESS) and rejoins (GROUP_JOIN #2, same member id, a higher generation);
// 3. POST /time/advance past the session timeout: the broker expires the member without anyone waiting; kafkajs's
//    next heartbeat gets UNKNOWN_MEMBER_ID and it joins again as a new member (GROUP_JOIN #3, a new member id).
//
// stdout carries one JSON object per line (the Python test reads them); the last is {"result": "ok", ...} or
// {"result": "error", "error": ...}. kafkajs's own log goes to stderr.
const { Kafka, logLevel } = require('kafkajs')

const [bootstrap, control, topic, groupId] = process.argv.slice(2)
const SESSION_TIMEOUT_MS = 10000
const STEP_TIMEOUT_MS = 20000

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

async function api(method, path, body) {
  const response = await fetch(control + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const data = await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(data)}`)
  return data
}

async function waitFor(what, predicate) {
  const deadline = Date.now() + STEP_TIMEOUT_MS
  for (;;) {
    if (await predicate()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

async function stableGroup(minGeneration) {
  let group
  await waitFor(`group ${groupId} Stable at generation >= ${minGeneration}`, async () => {
    group = await api('GET', `/groups/${encodeURIComponent(groupId)}`)
    return group.state === 'Stable' && group.generation >= minGeneration && group.members.length === 1
  })
  return group
}

async function main() {
  const kafka = new Kafka({
    clientId: 'kafkajs-control',
    brokers: [bootstrap],
    logLevel: logLevel.WARN,
    logCreator: () => ({ label, log }) => process.stderr.write(JSON.stringify({ level: label, ...log }) + '\n'),
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 20 },
  })
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })
  await admin.disconnect()

  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: SESSION_TIMEOUT_MS,
    rebalanceTimeout: 10000,
    heartbeatInterval: 200,
    maxWaitTimeInMs: 100, // kafkajs heartbeats between fetches: keep the long poll short
  })
  const joins = []
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    joins.push(payload)
    emit({ event: 'GROUP_JOIN', memberId: payload.memberId, isLeader: payload.isLeader })
  })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({ eachMessage: async () => {} })
  try {
    await waitFor('the first GROUP_JOIN', () => joins.length >= 1)
    const first = await stableGroup(1)

    await api('POST', `/groups/${encodeURIComponent(groupId)}/rebalance`, { reason: 'kafkajs control API test' })
    await waitFor('GROUP_JOIN after POST /rebalance', () => joins.length >= 2)
    const rebalanced = await stableGroup(first.generation + 1)

    await api('POST', '/time/advance', { ms: SESSION_TIMEOUT_MS + 1 })
    await waitFor('GROUP_JOIN after the session expired', () => joins.length >= 3)
    const rejoined = await stableGroup(rebalanced.generation + 1)

    const timeline = await api('GET', `/groups/${encodeURIComponent(groupId)}/timeline?format=json`)
    emit({
      result: 'ok',
      joins: joins.map((j) => j.memberId),
      generations: [first.generation, rebalanced.generation, rejoined.generation],
      members: [first.members[0], rebalanced.members[0], rejoined.members[0]],
      timelineKinds: [...new Set(timeline.events.map((e) => e.kind))],
    })
  } finally {
    await consumer.disconnect()
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    emit({ result: 'error', error: String((e && e.stack) || e) })
    process.exit(1)
  }
)
