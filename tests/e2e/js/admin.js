'use strict'
// kafkajs admin client as a JSON-RPC server on stdin/stdout.  Usage: node admin.js BOOTSTRAP
const { AssignerProtocol } = require('kafkajs')
const { makeKafka, serveRpc, emit, errorText } = require('./common')

async function main() {
  const admin = makeKafka(process.argv[2], 'e2e-admin').admin()
  await admin.connect()
  serveRpc(
    {
      // CreateTopics (replicationFactor left out: the broker's default); the result is kafkajs's boolean (true: created)
      createTopic: ({ topic, partitions, replicationFactor }) =>
        admin.createTopics({
          topics: [{ topic, numPartitions: partitions, ...(replicationFactor ? { replicationFactor } : {}) }],
          waitForLeaders: true,
        }),
      // ListOffsets: [{partition, offset (high watermark), low, high}]
      topicOffsets: async ({ topic }) =>
        (await admin.fetchTopicOffsets(topic)).map(p => ({
          partition: p.partition,
          low: Number(p.low),
          high: Number(p.high),
        })),
      // DeleteRecords: every record of the partition below `offset` (-1: the high watermark) goes
      // (kafkajs looks the partition's leader up in metadata it must have loaded first)
      deleteTopicRecords: async ({ topic, partition, offset }) => {
        await admin.fetchTopicMetadata({ topics: [topic] })
        await admin.deleteTopicRecords({ topic, partitions: [{ partition, offset: String(offset) }] })
        return true
      },
      // OffsetFetch: committed offset per partition (-1: none)
      fetchOffsets: async ({ group, topic }) => {
        const [result] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
        return result.partitions.map(p => ({ partition: p.partition, offset: Number(p.offset) }))
      },
      // AlterConfigs: replaces the resource's whole set of overrides; [{errorCode, errorMessage, name}]
      alterConfigs: async ({ type, name, configs, validateOnly }) => {
        const configEntries = Object.entries(configs).map(([key, value]) => ({ name: key, value }))
        const { resources } = await admin.alterConfigs({
          validateOnly: Boolean(validateOnly),
          resources: [{ type, name, configEntries }],
        })
        return resources.map(r => ({ errorCode: r.errorCode, errorMessage: r.errorMessage, name: r.resourceName }))
      },
      // DescribeConfigs: {errorCode, configs: {key: {value, source, readOnly, isSensitive}}}
      describeConfigs: async ({ type, name, keys }) => {
        const { resources } = await admin.describeConfigs({
          includeSynonyms: false,
          resources: [{ type, name, configNames: keys }],
        })
        const [r] = resources
        const configs = {}
        for (const e of r.configEntries) {
          configs[e.configName] = {
            value: e.configValue,
            source: e.configSource,
            readOnly: e.readOnly,
            isSensitive: e.isSensitive,
          }
        }
        return { errorCode: r.errorCode, configs }
      },
      // DescribeGroups with each member's decoded assignment
      describeGroup: async ({ group }) => {
        const { groups } = await admin.describeGroups([group])
        const [g] = groups
        return {
          errorCode: g.errorCode,
          state: g.state,
          protocolType: g.protocolType,
          protocol: g.protocol,
          members: g.members.map(m => {
            const decoded = m.memberAssignment.length ? AssignerProtocol.MemberAssignment.decode(m.memberAssignment) : null
            return { memberId: m.memberId, clientId: m.clientId, assignment: decoded ? decoded.assignment : {} }
          }),
        }
      },
    },
    () => admin.disconnect()
  )
  emit({ event: 'ready' })
}

main().catch(e => {
  emit({ event: 'fatal', error: errorText(e) })
  process.exit(1)
})
