# group-broker: a Kafka-protocol broker with a faithful consumer group coordinator.
# Run it with host networking (docker-compose.yml's `broker`: the control API listens on loopback), or with published
# ports and a control API token (`broker-published`, for Docker Desktop): README, "Docker".
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY coordinator ./coordinator
COPY storage ./storage
COPY broker ./broker
COPY toolkit ./toolkit
COPY cli ./cli
COPY server.py server.properties ./
RUN pip install --no-cache-dir .

VOLUME /data
# The image's defaults are KAFKA_* environment variables (Kafka's docker convention), not CMD arguments, so they
# stay when you add your own: `docker run IMAGE --override group.max.size=5` keeps /data and the control API.
# 9092: Kafka protocol (another port: `-e KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:19092`);
# 9644: control API (virtual time, faults, timelines, /metrics)
ENV KAFKA_LISTENERS=PLAINTEXT://127.0.0.1:9092 \
    KAFKA_LOG_DIRS=/data \
    KAFKA_CONTROL_LISTENER=http://127.0.0.1:9644
ENTRYPOINT ["python", "server.py", "server.properties"]
CMD []
