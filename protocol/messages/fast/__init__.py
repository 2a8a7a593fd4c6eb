"""Generated fast codecs (`make codegen`, protocol/fastgen.py), imported by protocol.fastcodec."""

#: api key -> the module of this package holding its request decoders and response encoders.
MODULES = {
    12: 'heartbeat',
    8: 'offset_commit',
    9: 'offset_fetch',
    11: 'join_group',
    14: 'sync_group',
    0: 'produce',
    1: 'fetch',
    3: 'metadata',
    18: 'api_versions',
}
