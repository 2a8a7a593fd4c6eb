# group-broker: a Kafka-protocol broker with a faithful consumer group coordinator.
# Run it with host networking (see docker-compose.yml): the control API only ever listens on loopback.
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY coordinator ./coordinator
COPY storage ./storage
COPY broker ./broker
COPY server.py server.properties ./
RUN pip install --no-cache-dir .

VOLUME /data
ENTRYPOINT ["python", "server.py", "server.properties"]
# 9092: Kafka protocol; 9644: control API (virtual time, faults, timelines, /metrics)
CMD ["--override", "listeners=PLAINTEXT://127.0.0.1:9092", \
     "--override", "log.dirs=/data", \
     "--override", "control.listener=http://127.0.0.1:9644"]
