# group-broker: every target creates what it needs, so a fresh clone only needs `make test` or `make run`.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-test

.PHONY: install install-test accel tools reference-kafka java-clients run test campaigns lint codegen bench report test-artifacts clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[accel]'
	touch $@

install: $(VENV)/.installed

# The hot loops protocol/compiled.py lists (the produce path's record walk), compiled to C with mypyc beside their
# sources; rebuilt only when a source is newer than its build. Without gcc and the Python headers they run
# interpreted (a notice says so); `make test` installs both and requires the build.
accel: install
	$(BIN)/python -m protocol.compiled build

# `make run PORT=19092` when 9092 is taken (the data stays in ./data, as server.properties says)
PORT ?= 9092
run: install accel
	$(BIN)/python server.py server.properties --override listeners=PLAINTEXT://127.0.0.1:$(PORT)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test,pipeline]'
	touch $(STAMP)

# kafkajs for the JavaScript end-to-end tests, pinned by package-lock.json
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error

# Debian packages the end-to-end and interop tests drive (installed only when missing; CI runs as root):
# kcat (librdkafka's CLI), burrow + zookeeper (the Burrow interop test), chromium (the timeline page test),
# gcc + python3-dev (the mypyc-compiled modules, `make accel`)
APT_PACKAGES := kcat burrow zookeeper chromium gcc python3-dev
tools:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && apt-get install -y -qq $$missing; fi

# The reference Apache Kafka broker of the differential suite (tests/reference/server/pom.xml pins the release):
# its runtime classpath, fetched once from Maven Central into target/lib. Without Maven (a developer's laptop) this
# prints a notice and the tests that need Kafka skip with the reason; CI has Maven.
REFERENCE_SERVER := tests/reference/server
$(REFERENCE_SERVER)/target/lib/.fetched: $(REFERENCE_SERVER)/pom.xml
	@if command -v mvn >/dev/null 2>&1; then \
	  rm -rf $(REFERENCE_SERVER)/target/lib && \
	  mvn -q -B -f $(REFERENCE_SERVER)/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
	    -DoutputDirectory=$(CURDIR)/$(REFERENCE_SERVER)/target/lib && touch $@; \
	else echo "mvn not found: the tests against the reference Kafka broker will be skipped"; fi

reference-kafka: $(REFERENCE_SERVER)/target/lib/.fetched

# The Java client programs of the end-to-end tests (tests/e2e/test_java_client.py, test_java_consumer_protocol.py):
# compiled, with their runtime classpath (kafka-clients pinned in the pom) copied to target/lib, so the tests run
# `java` and never call Maven.
# Without Maven this prints a notice and the Java client tests skip with the reason.
JAVA_CLIENTS := tests/reference/clients
$(JAVA_CLIENTS)/target/.built: $(JAVA_CLIENTS)/pom.xml $(shell find $(JAVA_CLIENTS)/src -name '*.java' 2>/dev/null)
	@if command -v mvn >/dev/null 2>&1; then \
	  mvn -q -B -Dstyle.color=never -f $(JAVA_CLIENTS)/pom.xml compile dependency:copy-dependencies \
	    -DoutputDirectory=$(CURDIR)/$(JAVA_CLIENTS)/target/lib && touch $@; \
	else echo "mvn not found: the Java client tests will be skipped"; fi

java-clients: $(JAVA_CLIENTS)/target/.built

install-test: $(STAMP) node_modules/.package-lock.json tools reference-kafka java-clients accel

codegen: install-test
	$(BIN)/python -m protocol.codegen

lint: install-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy protocol coordinator broker storage toolkit cli pipeline server.py
	$(BIN)/lint-imports

# The suite in two runs: the directories of in-process, CPU-bound tests (codecs, the coordinator on a manual clock,
# storage, the broker over loopback) on two workers (pytest-xdist, one module per worker at a time), then every other
# directory alone: those start reference Kafka brokers, JVMs and client processes and time real flows, and keep the
# machine to themselves. A new test directory runs in the second run unless it is added here.
PARALLEL_TESTS := tests/protocol tests/coordinator tests/unit tests/storage tests/broker tests/security
test: install-test lint
	$(BIN)/python -m protocol.compiled require
	$(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadfile $(PARALLEL_TESTS)
	$(BIN)/pytest -q -p no:cacheprovider $(addprefix --ignore=,$(PARALLEL_TESTS))

# The seeded fault-injection campaigns in full (kill -9 at every step and at random moments, corruption);
# `make test` runs a small sample of each. CAMPAIGN_SEEDS sets how many seeded broker runs each takes.
campaigns: install-test
	CAMPAIGN=1 $(BIN)/pytest -q -p no:cacheprovider -m campaign

# The PySpark analysis of the broker's ./data (what `make run` writes): Parquet tables, report.txt, lag.png,
# rebalances.png in ./pipeline-out. Needs only the pipeline extra (and Java 17+), not the test tools.
$(VENV)/.installed-pipeline: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[pipeline]'
	touch $@

report: $(VENV)/.installed-pipeline
	$(BIN)/python -m pipeline analyze --data-dir data --out pipeline-out

# The pipeline's pictures of the test suite's known-answer log (and of the 100-generation picture test), kept in
# test-artifacts/pipeline/ (committed) for a human to look at.
test-artifacts: $(VENV)/.installed-pipeline
	$(BIN)/python -m tests.pipeline.render_artifacts

bench: install-test bench-kfake accel
	$(BIN)/python -m bench

# The pipeline at scale (a 1 GiB topic segment, 10 M commits; bench/bench_pipeline_scale.py): many minutes, so
# `make bench` skips it unless BENCH_PIPELINE_SCALE=1; this target sets it and runs that benchmark alone.
.PHONY: bench-pipeline-scale
bench-pipeline-scale: install-test
	BENCH_PIPELINE_SCALE=1 $(BIN)/python -m bench pipeline_scale

clean:
	rm -rf $(VENV) build *.egg-info node_modules tests/reference/*/target $(KFAKE_BIN)

# -- franz-go's kfake: the fourth column of `make bench` (bench_broker; the third is the reference Kafka above) ----
# bench/kfake is a tiny Go main around github.com/twmb/franz-go/pkg/kfake (go.mod and go.sum pin it), built once from
# the Go module proxy into bench/kfake/kfake-bin (gitignored). Without Go this prints a notice and the benchmark's
# kfake column says "n/a (why)"; nothing else needs Go.
KFAKE_DIR := bench/kfake
KFAKE_BIN := $(KFAKE_DIR)/kfake-bin
.PHONY: bench-kfake
$(KFAKE_BIN): $(KFAKE_DIR)/main.go $(KFAKE_DIR)/go.mod $(KFAKE_DIR)/go.sum
	@if command -v go >/dev/null 2>&1; then \
	  cd $(KFAKE_DIR) && go build -mod=readonly -buildvcs=false -trimpath -o kfake-bin . ; \
	else echo "go not found: the kfake column of make bench will say n/a"; fi

bench-kfake: $(KFAKE_BIN)

# The end-to-end tests written for both brokers (fixture `e2e_target`), run against the reference Apache Kafka
# instead of group-broker: what proves the tests themselves right. Needs Java and the fetched Kafka (reference-kafka).
.PHONY: test-e2e-reference
test-e2e-reference: install-test
	$(BIN)/pytest -q -p no:cacheprovider --e2e-broker=kafka tests/e2e/test_confluent_consumer_protocol.py \
	  tests/e2e/test_java_consumer_protocol.py tests/e2e/test_transactions.py tests/e2e/test_cluster_admin.py
