# ikd - inverse-kinematics solving service. `make run` and `make test` set everything up (see README.md).

CC      ?= cc
# -flto=auto: link-time optimisation (the solvers' small math helpers inlined across files:
# skeleton clip frames about 4% faster, the same results); fat objects keep libikd.a usable
# by any linker. `make OPT=-O2` builds without it.
OPT     ?= -O2 -flto=auto -ffat-lto-objects
# FMA: the skeleton solver (src/solve/multi*.c, skeleton.c) with fused multiply-add, x86-64
# only. auto (the default): when this machine's CPU and compiler have it (full 6dof+aim humanoid
# solves 6% faster; results differ from a build without it in the last bits). FMA=0: a binary
# for any x86-64 CPU. Other files stay unfused: tests check some of their results (a clip's
# normalised poses, the codecs' numbers) bit for bit against code built without it.
FMA     ?= auto
ifeq ($(FMA),auto)
override FMA := $(shell [ "$$(uname -m)" = x86_64 ] && grep -qw fma /proc/cpuinfo 2>/dev/null \
                  && echo 'int x;' | $(CC) -mfma -x c -c -o /dev/null - 2>/dev/null && echo 1 || echo 0)
endif
SOLVE_CFLAGS := $(if $(filter 1,$(FMA)),-mfma -ffp-contract=fast)
# gcc-ar: the archiver that indexes LTO objects (binutils' ar with gcc's plugin)
AR      := gcc-ar
CFLAGS  ?= $(OPT) -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# SAN: extra compile and link flags (make asan sets the sanitizers)
SAN     ?=
override CFLAGS += -std=c11 -D_GNU_SOURCE -Iinclude -MMD -MP -pthread $(SAN)
override LDLIBS += -lm -pthread $(SAN)
BUILD   ?= build

# Debian packages: what the daemon needs to build (make run), and what the tests add (make test).
RUN_PKGS  := gcc make pkg-config libmicrohttpd-dev libjansson-dev libmsgpack-dev libexpat1-dev libmeshoptimizer-dev libjs-three
TEST_PKGS := $(RUN_PKGS) check curl openssl prometheus systemd python3 python3-venv python3-pip binutils

SERVER_CFLAGS := $(shell pkg-config --cflags libmicrohttpd jansson msgpack expat 2>/dev/null)
# libmeshoptimizer (glTF's EXT_meshopt_compression) has no .pc file in Debian 12
SERVER_LIBS   := $(shell pkg-config --libs libmicrohttpd jansson msgpack expat 2>/dev/null) -lmeshoptimizer
CHECK_CFLAGS  := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS    := $(shell pkg-config --libs check 2>/dev/null)

LIB_SRC    := $(wildcard src/solve/*.c)
CODEC_SRC  := $(wildcard src/codec/*.c)
SERVICE_SRC := $(wildcard src/service/*.c)
SERVER_SRC := $(filter-out src/server/main.c,$(wildcard src/server/*.c))
LIB_OBJ    := $(LIB_SRC:%.c=$(BUILD)/%.o)
CODEC_OBJ  := $(CODEC_SRC:%.c=$(BUILD)/%.o) $(SERVICE_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/assets.o
MAIN_OBJ   := $(BUILD)/src/server/main.o

TEST_UNIT  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
TEST_E2E   := $(BUILD)/tests/run_e2e $(BUILD)/tests/run_service $(BUILD)/tests/run_hostile
# an LD_PRELOAD shim the hostile suite runs the daemon under (allocations above a size fail)
FAILALLOC  := $(BUILD)/tests/failalloc.so
TESTUTIL_OBJ := $(BUILD)/tests/unit/testutil.o $(BUILD)/tests/unit/problems.o $(BUILD)/tests/unit/jsonpack.o \
                $(BUILD)/tests/unit/humanoid.o

LISTEN ?= 127.0.0.1:8080

# The browser editor and the JavaScript client (src/ui/), embedded in the daemon: the page
# and client, three.js from Debian's libjs-three, and @msgpack/msgpack (pinned in
# src/ui/package-lock.json) from npm when npm is there (else the editor speaks JSON only).
THREE_DIR := /usr/share/javascript/three
UI_VENDOR := $(BUILD)/ui-vendor
MSGPACK_DIR := $(UI_VENDOR)/node_modules/@msgpack/msgpack/dist.es5+esm
JS := text/javascript;charset=utf-8
UI_FILES := "/=src/ui/index.html=text/html;charset=utf-8" "/ui/editor.js=src/ui/editor.js=$(JS)" \
	"/ui/editor.css=src/ui/editor.css=text/css;charset=utf-8" "/client/ikd.js=src/ui/ikd.js=$(JS)" \
	"/ui/three/build/three.module.js=$(THREE_DIR)/three.module.js=$(JS)" \
	"/ui/three/examples/jsm/controls/OrbitControls.js=$(THREE_DIR)/examples/jsm/controls/OrbitControls.js=$(JS)" \
	"/ui/three/examples/jsm/controls/TransformControls.js=$(THREE_DIR)/examples/jsm/controls/TransformControls.js=$(JS)" \
	"/ui/three/examples/jsm/loaders/GLTFLoader.js=$(THREE_DIR)/examples/jsm/loaders/GLTFLoader.js=$(JS)" \
	"/ui/three/examples/jsm/exporters/GLTFExporter.js=$(THREE_DIR)/examples/jsm/exporters/GLTFExporter.js=$(JS)"
MSGPACK_MODULES := index encode decode decodeAsync Decoder DecodeError Encoder ExtData ExtensionCodec timestamp context \
	CachedKeyDecoder utils/stream utils/prettyByte utils/utf8 utils/typedArrays utils/int

$(BUILD)/embed: src/ui/embed.c
	@mkdir -p $(@D)
	$(CC) -O1 -o $@ $<

$(UI_VENDOR)/stamp: src/ui/package.json src/ui/package-lock.json
	@mkdir -p $(UI_VENDOR)
	@cp src/ui/package.json src/ui/package-lock.json $(UI_VENDOR)/
	@if command -v npm >/dev/null 2>&1; then \
	  (cd $(UI_VENDOR) && npm ci --no-audit --no-fund --loglevel=error >/dev/null) || \
	    echo "ui: npm ci failed: the editor and client speak JSON only"; \
	else echo "ui: npm not found (apt-get install npm): the editor and client speak JSON only"; fi
	@touch $@

$(BUILD)/gen/assets.c: $(BUILD)/embed src/ui/index.html src/ui/editor.js src/ui/editor.css src/ui/ikd.js $(UI_VENDOR)/stamp
	@mkdir -p $(@D)
	@./$(BUILD)/embed $@ $(UI_FILES) $(foreach m,$(MSGPACK_MODULES),"/client/msgpack/$(m).mjs=$(MSGPACK_DIR)/$(m).mjs=$(JS)")

$(BUILD)/gen/assets.o: $(BUILD)/gen/assets.c
	$(CC) -O0 -std=c11 -Iinclude -Isrc -c -o $@ $<

.PHONY: browser-test lint-structure readme-example all deps deps-test build run test check check-suites unit e2e lint-openapi deploy-checks clean bench load asan fuzz soak install scale-test valgrind
.DEFAULT_GOAL := all

all: $(BUILD)/libikd.a $(BUILD)/ikd

# Install missing Debian packages (as root), or print the command to do so.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing:$$missing"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	  else \
	    echo "missing packages; run: sudo apt-get install -y --no-install-recommends$$missing"; exit 1; \
	  fi; \
	fi
endef

deps:
	$(call install_missing,$(RUN_PKGS))

deps-test:
	$(call install_missing,$(TEST_PKGS))

# Build and start the daemon in the foreground (LISTEN=HOST:PORT to change the address).
run: deps
	@$(MAKE) --no-print-directory build
	./$(BUILD)/ikd --listen $(LISTEN)

build: all

# Build and run every test; Check prints a summary line per suite.
test: deps-test
	@$(MAKE) --no-print-directory check

check: check-suites
	@$(MAKE) --no-print-directory lint-structure readme-example lint-openapi deploy-checks browser-test

# The editor and client in a real browser (tests/browser/editor.mjs): Debian's chromium
# (installed here as root when missing) driven by playwright-core (pinned, npm). Without
# npm or chromium the test is skipped with a notice. Screenshot: build/editor.png.
browser-test: $(BUILD)/ikd $(BUILD)/bench
	@echo "== browser (editor and client)"
	@if ! command -v npm >/dev/null 2>&1; then echo "browser: npm not found (apt-get install npm): SKIPPED"; exit 0; fi; \
	if ! command -v chromium >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || true; fi; \
	if ! command -v chromium >/dev/null 2>&1; then echo "browser: chromium not installed (apt-get install chromium): SKIPPED"; exit 0; fi; \
	(cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && \
	  node tests/browser/editor.mjs $(BUILD)/ikd $(BUILD)/editor.png $(BUILD)/bench

# The library examples (README's chain, docs/library.md's clip), built through pkg-config and run.
readme-example: $(BUILD)/libikd.a
	@echo "== library examples (README.md, docs/library.md)"
	@tests/deploy/readme_example.sh README.md docs/library.md

# The layering and size rules of src/ and include/ (tests/lint/structure.py).
lint-structure: $(BUILD)/libikd.a
	@echo "== structure"
	@python3 tests/lint/structure.py $(BUILD)/libikd.a

# deploy/: the systemd unit (systemd-analyze verify), the Kubernetes manifests against the
# Kubernetes schemas and the Dockerfile with a linter (pinned npm tools in tests/deploy), and
# the runtime stage's packages against what the built ikd links.
deploy-checks: $(BUILD)/ikd
	@echo "== deploy: systemd unit"
	@tmp=$$(mktemp -d) && sed "s|/usr/local/bin/ikd|$(CURDIR)/$(BUILD)/ikd|" deploy/systemd/ikd.service > $$tmp/ikd.service && \
	  systemd-analyze verify $$tmp/ikd.service && echo "systemd-analyze verify: ok"; rc=$$?; rm -rf $$tmp; exit $$rc
	@echo "== deploy: make install, then a program linked through pkg-config"
	@tmp=$$(mktemp -d) && $(MAKE) --no-print-directory -s install DESTDIR=$$tmp PREFIX=/opt/ikd >/dev/null && \
	  $(CC) -o $$tmp/link_test tests/deploy/link_test.c \
	    $$(PKG_CONFIG_SYSROOT_DIR=$$tmp PKG_CONFIG_PATH=$$tmp/opt/ikd/lib/pkgconfig pkg-config --cflags --libs ikd) && \
	  $$tmp/link_test; rc=$$?; rm -rf $$tmp; exit $$rc
	@echo "== deploy: runtime libraries"
	@tests/deploy/runtime_libs.sh $(BUILD)/ikd deploy/Dockerfile
	@if command -v npm >/dev/null 2>&1; then \
	  echo "== deploy: Kubernetes schemas, Dockerfile lint"; \
	  (cd tests/deploy && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && node tests/deploy/validate.mjs; \
	else echo "== deploy: npm not found, Kubernetes and Dockerfile checks skipped"; fi

check-suites: $(BUILD)/libikd.a $(BUILD)/ikd $(TEST_UNIT) $(TEST_E2E) $(FAILALLOC) $(BUILD)/bench
	@set -e; for t in $(TEST_UNIT); do echo "== $$t"; IKD_TEST_FIXTURES=tests/fixtures $$t; done
	@set -e; for t in $(TEST_E2E); do echo "== $$t"; IKD_BIN=$(BUILD)/ikd IKD_TEST_FIXTURES=tests/fixtures \
	  IKD_TEST_FAILALLOC=$(FAILALLOC) $$t; done
	@echo "== tests/e2e/transport.py (plain clients: early answers, big clips, stalled streams)"
	@python3 tests/e2e/transport.py $(BUILD)/ikd $(BUILD)/bench
	@echo "== tests/e2e/import_test.py (POST /v1/import on generated files)"
	@python3 tests/e2e/import_test.py $(BUILD)/ikd
	@echo "== tests/e2e/python_client_test.py (clients/python installed in a venv, against a live daemon)"
	@python3 tests/e2e/python_client_test.py $(BUILD)/ikd $(BUILD)

# OpenAPI checks with pinned npm tools (tests/openapi): Redocly's lint of openapi.yaml, then the
# contract test, which sends live traffic through Stoplight Prism's validating proxy. Skipped
# with a notice when npm is absent.
lint-openapi: $(BUILD)/ikd
	@if command -v npm >/dev/null 2>&1; then \
	  echo "== openapi lint"; \
	  (cd tests/openapi && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && \
	  out=$$(tests/openapi/node_modules/.bin/redocly lint openapi.yaml --format=stylish 2>&1); rc=$$?; \
	  printf '%s\n' "$$out" | grep -v '[║╔╚]'; [ $$rc = 0 ] && \
	  echo "== contract (prism proxy)" && node tests/contract/contract.mjs $(BUILD)/ikd; \
	else echo "== openapi checks: npm not found, skipped (apt-get install npm)"; fi

$(BUILD)/libikd.a: $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && $(AR) rcs $@ $^

$(BUILD)/ikd: $(MAIN_OBJ) $(SERVER_OBJ) $(CODEC_OBJ) $(BUILD)/libikd.a
	$(CC) $(CFLAGS) -o $@ $(MAIN_OBJ) $(SERVER_OBJ) $(CODEC_OBJ) $(BUILD)/libikd.a $(SERVER_LIBS) $(LDLIBS)

# the solvers' objects are built again when SOLVE_CFLAGS change (FMA=0 after FMA=auto)
$(BUILD)/solve.flags: FORCE
	@mkdir -p $(@D); echo '$(SOLVE_CFLAGS)' | cmp -s - $@ || echo '$(SOLVE_CFLAGS)' > $@

$(BUILD)/src/solve/%.o: src/solve/%.c $(BUILD)/solve.flags
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(if $(filter multi% serial skeleton,$*),$(SOLVE_CFLAGS)) -c -o $@ $<

$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/%.o: tests/unit/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) $(CHECK_CFLAGS) -Isrc -c -o $@ $<

$(BUILD)/tests/e2e/%.o: tests/e2e/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) $(CHECK_CFLAGS) -c -o $@ $<

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(BUILD)/tests/unit/suite.o $(TESTUTIL_OBJ) $(SERVER_OBJ) $(CODEC_OBJ) $(BUILD)/libikd.a
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(CHECK_LIBS) $(LDLIBS)

$(FAILALLOC): tests/e2e/failalloc.c
	@mkdir -p $(@D)
	$(CC) -O2 -shared -fPIC -o $@ $< -ldl

$(BUILD)/tests/run_e2e: $(BUILD)/tests/e2e/e2e.o $(BUILD)/tests/e2e/harness.o
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/run_service: $(BUILD)/tests/e2e/service.o $(BUILD)/tests/e2e/harness.o
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/tests/run_hostile: $(BUILD)/tests/e2e/hostile.o $(BUILD)/tests/e2e/harness.o
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(CHECK_LIBS) $(LDLIBS)

# make install [PREFIX=/usr/local] [DESTDIR=]: the daemon, the library, its headers, a
# pkg-config file and the systemd unit (with its sample settings).
PREFIX ?= /usr/local
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/ikd \
	  $(DESTDIR)/lib/systemd/system $(DESTDIR)/etc/ikd
	install -m 755 $(BUILD)/ikd $(DESTDIR)$(PREFIX)/bin/ikd
	install -m 644 $(BUILD)/libikd.a $(DESTDIR)$(PREFIX)/lib/libikd.a
	install -m 644 include/ikd/*.h $(DESTDIR)$(PREFIX)/include/ikd/
	sed 's|@PREFIX@|$(PREFIX)|' deploy/ikd.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/ikd.pc
	sed 's|/usr/local/bin/ikd|$(PREFIX)/bin/ikd|' deploy/systemd/ikd.service > $(DESTDIR)/lib/systemd/system/ikd.service
	[ -e $(DESTDIR)/etc/ikd/ikd.env ] || install -m 644 deploy/systemd/ikd.env $(DESTDIR)/etc/ikd/ikd.env

clean:
	rm -rf $(BUILD) build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# In-process solver benchmark (success rates and solve times); BENCH_N problems per set.
BENCH_N ?= 1000
$(BUILD)/tests/bench/%.o: tests/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) -Isrc -c -o $@ $<

$(BUILD)/bench: $(BUILD)/tests/bench/bench.o $(TESTUTIL_OBJ) $(SERVER_OBJ) $(CODEC_OBJ) $(BUILD)/libikd.a
	$(CC) $(CFLAGS) -o $@ $^ $(SERVER_LIBS) $(LDLIBS)

# The load test (tests/load/load.py): LOAD_ARGS are passed on, e.g.
#   make load LOAD_ARGS="--mode batch --encoding msgpack --duration 10"
LOAD_PKGS := wrk gnuplot-nox python3
LOAD_ARGS ?=
$(BUILD)/baseline: tests/load/baseline.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) -o $@ $< $(SERVER_LIBS) $(LDLIBS)

load:
	$(call install_missing,$(RUN_PKGS) $(LOAD_PKGS))
	@$(MAKE) --no-print-directory $(BUILD)/ikd $(BUILD)/baseline $(BUILD)/bench
	python3 tests/load/load.py $(LOAD_ARGS)

# Everything built with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/, then
# every libcheck suite (unit and end-to-end, the daemon included) run under them. Sanitized
# builds run several times slower: CK_TIMEOUT_MULTIPLIER scales every test case's timeout.
asan: deps-test
	@$(MAKE) --no-print-directory BUILD=build-asan OPT=-O1 \
	  SAN="-fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	  ASAN_OPTIONS=quarantine_size_mb=1:detect_leaks=1 IKD_TEST_SANITIZED=1 CK_TIMEOUT_MULTIPLIER=10 check-suites

# libFuzzer harnesses (tests/fuzz/) built with clang, ASan and UBSan; each runs FUZZ_SECONDS
# after replaying tests/fuzz/regressions/. Seeds come from the request fixtures.
FUZZ_SECONDS ?= 60
FUZZ_PKGS := clang libclang-rt-14-dev python3
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-std=c11 -D_GNU_SOURCE -Iinclude -Isrc
FUZZ_SRC := $(LIB_SRC) $(CODEC_SRC) $(SERVICE_SRC)

build-fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/reader.h $(FUZZ_SRC) $(wildcard include/ikd/*.h src/*/*.h)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) $(SERVER_CFLAGS) -o $@ $< $(FUZZ_SRC) $(SERVER_LIBS) -lm -pthread

fuzz: deps-test
	$(call install_missing,$(FUZZ_PKGS))
	@$(MAKE) --no-print-directory build-fuzz/fuzz_api build-fuzz/fuzz_solvers build-fuzz/fuzz_skeleton build-fuzz/fuzz_strtod \
	  build-fuzz/fuzz_import
	python3 tests/fuzz/seeds.py build-fuzz/corpus
	./build-fuzz/fuzz_api -runs=0 tests/fuzz/regressions/api
	./build-fuzz/fuzz_solvers -runs=0 tests/fuzz/regressions/solvers
	./build-fuzz/fuzz_skeleton -runs=0 tests/fuzz/regressions/skeleton
	./build-fuzz/fuzz_strtod -runs=0 tests/fuzz/regressions/strtod
	./build-fuzz/fuzz_import -runs=0 tests/fuzz/regressions/import
	@for f in api solvers skeleton strtod import; do \
	  echo "== fuzz_$$f for $(FUZZ_SECONDS) s"; \
	  ./build-fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    $$( [ $$f = api ] && echo -dict=tests/fuzz/json.dict ) -print_final_stats=1 \
	    -artifact_prefix=build-fuzz/ build-fuzz/corpus/$$f > build-fuzz/fuzz_$$f.log 2>&1; rc=$$?; \
	  tail -8 build-fuzz/fuzz_$$f.log; \
	  if [ $$rc != 0 ]; then echo "fuzz_$$f found a failure (input saved in build-fuzz/); add it to tests/fuzz/regressions/$$f/"; exit 1; fi; \
	done

# Three instances behind nginx, one stopped mid-load: no request may fail (SCALE_SECONDS of load).
SCALE_SECONDS ?= 8
scale-test:
	$(call install_missing,$(RUN_PKGS) wrk nginx-light python3 curl)
	@$(MAKE) --no-print-directory $(BUILD)/ikd
	tests/deploy/scale_test.sh $(BUILD)/ikd $(SCALE_SECONDS)

# The end-to-end suite with the daemon under valgrind memcheck: any invalid access or
# definite/indirect leak makes the daemon exit 99, which fails the test that stops it.
valgrind: deps-test
	$(call install_missing,valgrind)
	@$(MAKE) --no-print-directory $(BUILD)/ikd $(BUILD)/tests/run_e2e
	IKD_BIN=$(BUILD)/ikd IKD_TEST_FIXTURES=tests/fixtures CK_TIMEOUT_MULTIPLIER=10 \
	IKD_TEST_WRAPPER="valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect" \
	  $(BUILD)/tests/run_e2e

# Saturation soak (tests/load/soak.py): SOAK_SECONDS of mixed load with deliberate 503s.
SOAK_SECONDS ?= 60
soak:
	$(call install_missing,$(RUN_PKGS) wrk python3)
	@$(MAKE) --no-print-directory $(BUILD)/ikd
	python3 tests/load/soak.py --seconds $(SOAK_SECONDS)

# REAL_FILES: real humanoid files for the limits preset's table (Debian's assimp-testmodels BVH
# clips and ../shared/samples' GLBs where present; skipped with a notice where none are);
# REAL_ARMS: URDF arms for the robot-arm table (../shared/samples' URDFs where present); then six
# other arms written from their published kinematics (tests/bench/robots.py).
REAL_FILES ?= $(wildcard /usr/share/assimp/models/BVH/*.bvh ../shared/samples/*.glb)
REAL_ARMS ?= $(wildcard ../shared/samples/*.urdf)

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/bench $(BUILD)/ikd
	./$(BUILD)/bench $(BENCH_N)
	@if [ -n "$(REAL_FILES)" ]; then echo "== real motion inside limits=humanoid (tests/bench/rom.py)"; \
	  python3 tests/bench/rom.py $(BUILD)/ikd $(REAL_FILES); \
	  echo "== single solves on real rigs inside limits=humanoid (tests/bench/rigs.py)"; \
	  python3 tests/bench/rigs.py $(BUILD)/ikd $(REAL_FILES); \
	  for l in recording recording-channels take; do echo "== real clips solved back, and on six other rigs (tests/bench/mocap.py --limits=$$l --family)"; \
	    python3 tests/bench/mocap.py --limits=$$l --family=$(BUILD)/bvhvar $(BUILD)/ikd $(REAL_FILES); done; \
	  for l in humanoid none; do echo "== real clips solved back (tests/bench/mocap.py --limits=$$l)"; \
	    python3 tests/bench/mocap.py --limits=$$l $(BUILD)/ikd $(REAL_FILES); done; \
	else echo "== no real files (apt-get install assimp-testmodels): the real-motion tables skipped"; fi
	@if [ -n "$(REAL_ARMS)" ]; then echo "== real arms: 6-DoF flange goals (tests/bench/arms.py)"; \
	  python3 tests/bench/arms.py --bench $(BUILD)/bench $(BUILD)/ikd $(REAL_ARMS); \
	else echo "== no URDF arms (REAL_ARMS): skipped"; fi
	@echo "== six other arms from their published kinematics (tests/bench/robots.py, arms.py)"
	@python3 tests/bench/robots.py $(BUILD)/robots >/dev/null && \
	  python3 tests/bench/arms.py --bench $(BUILD)/bench $(BUILD)/ikd $(BUILD)/robots/*.urdf
	@if command -v npm >/dev/null 2>&1 && command -v chromium >/dev/null 2>&1; then \
	  echo "== the editor: a 121-joint character dragged by a hand (tests/browser/drag.mjs)"; \
	  (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && node tests/browser/drag.mjs $(BUILD)/ikd 3; \
	else echo "== no npm or chromium: the editor's drag benchmark skipped"; fi

# Keep intermediate objects (test and bench objects are built by pattern rules).
.SECONDARY:

.PHONY: FORCE
FORCE:
