# Tollgate. `make` lists the targets; `make test` runs every test on a real control plane.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO ?= go
OPA := $(GO) tool opa
CONTROLLER_GEN := $(GO) tool controller-gen

# The test control plane: kube-apiserver (and kubectl) from k8s.io/kubernetes and etcd, built
# from the versions pinned in hack/tools. A new pin builds into a new folder; an unchanged pin
# reuses the binaries.
K8S_VERSION := $(shell sed -nE "s/^(require)?[[:space:]]*k8s.io\/kubernetes (v[^ ]+).*/\2/p" hack/tools/kube-apiserver/go.mod)
ETCD_VERSION := $(shell sed -nE "s/^(require)?[[:space:]]*go.etcd.io\/etcd\/server\/v3 (v[^ ]+).*/\2/p" hack/tools/etcd/go.mod)
ASSETS := $(CURDIR)/bin/k8s/$(K8S_VERSION)-etcd-$(ETCD_VERSION)
# The version the API server reports (built from the module, it would say v0.0.0-master): real
# OLM checks operators' minKubeVersion against it.
K8S_SEMVER := $(subst ., ,$(patsubst v%,%,$(K8S_VERSION)))
K8S_LDFLAGS := -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) -X k8s.io/component-base/version.gitMajor=$(word 1,$(K8S_SEMVER)) -X k8s.io/component-base/version.gitMinor=$(word 2,$(K8S_SEMVER)) -X k8s.io/component-base/version.gitTreeState=clean
export KUBEBUILDER_ASSETS := $(ASSETS)

# Real OLM v0 for test/olm: the catalog and olm operators and opm, built from the versions pinned
# in hack/tools/olm, with OLM's own CRDs copied beside them. Built once per pin, like the control
# plane; test/olm finds them through TOLLGATE_OLM_BIN.
OLM_VERSION := $(shell sed -nE "s/^(require)?[[:space:]]*github.com\/operator-framework\/operator-lifecycle-manager (v[^ ]+).*/\2/p" hack/tools/olm/go.mod)
OPM_VERSION := $(shell sed -nE "s/^(require)?[[:space:]]*github.com\/operator-framework\/operator-registry (v[^ ]+).*/\2/p" hack/tools/olm/go.mod)
OLM_BIN := $(CURDIR)/bin/olm/$(OLM_VERSION)-opm-$(OPM_VERSION)
export TOLLGATE_OLM_BIN := $(OLM_BIN)
OLM_LDFLAGS := -X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=$(OLM_VERSION:v%=%)
OPM_LDFLAGS := -X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$(OPM_VERSION)

# Real OLM v1 for test/olmv1: catalogd and operator-controller, built from the version pinned in
# hack/tools/olmv1, with their CRDs (ClusterCatalog, ClusterExtension) copied beside them. Built
# once per pin, like OLM v0; test/olmv1 finds them through TOLLGATE_OLMV1_BIN.
OLMV1_VERSION := $(shell sed -nE "s/^(require)?[[:space:]]*github.com\/operator-framework\/operator-controller (v[^ ]+).*/\2/p" hack/tools/olmv1/go.mod)
OLMV1_BIN := $(CURDIR)/bin/olmv1/$(OLMV1_VERSION)
export TOLLGATE_OLMV1_BIN := $(OLMV1_BIN)
OLMV1_LDFLAGS := -X github.com/operator-framework/operator-controller/internal/shared/version.version=$(OLMV1_VERSION)

# One version: the VERSION file names the release. It is stamped into the binaries, tags the
# image, and `make manifests` writes it into the OLM bundle's CSV and config/default's image pin.
# Override it for a one-off build (VERSION=$$(git describe --tags --always --dirty)).
VERSION ?= $(shell cat VERSION)
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
# Reproducible builds: every timestamp in the image and the archives is the last commit's.
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
VERSION_LDFLAGS := -X github.com/tollgate-dev/tollgate/internal/version.Version=$(VERSION)
# The platforms of the image index `make image` writes: linux/<arch> for each.
IMAGE_ARCHES ?= amd64 arm64

REGO_COVERAGE_MIN ?= 90
TEST_FLAGS ?= -race
TEST_TIMEOUT ?= 30m
# FUZZTIME is how long `make fuzz` runs each fuzz target; FUZZMINIMIZETIME caps the minimizing
# of each new input (go's default, 60s, would leave the slower targets few executions).
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 5s

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...

.PHONY: manifests
manifests: ## Generate the CRDs (UpgradeGate and the OLM kinds), RBAC, and Tollgate's own OLM bundle.
	$(CONTROLLER_GEN) crd paths=./apis/tollgate/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) crd paths=./apis/operators/... output:crd:artifacts:config=config/crd/olm
	$(CONTROLLER_GEN) rbac:roleName=tollgate-manager paths=./controllers/... output:rbac:artifacts:config=config/rbac
	$(GO) run ./hack/olmbundle
	sed -i -E 's|^([[:space:]]*newTag:).*|\1 $(shell cat VERSION)|' config/default/kustomization.yaml

.PHONY: fmt
fmt: ## Format Go and Rego.
	$(GO) fmt ./...
	$(OPA) fmt --write policies bundles

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

GOLANGCI_LINT := $(GO) tool -modfile=hack/tools/golangci-lint/go.mod golangci-lint

.PHONY: lint
lint: vet ## Check Go (gofmt, golangci-lint) and Rego (opa fmt, strict check).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GOLANGCI_LINT) run ./...
	$(OPA) fmt --list --fail policies bundles
	$(OPA) check --strict policies
	@for p in bundles/packs/*/; do $(OPA) check --strict "$$p"; done

##@ Test

.PHONY: test
test: controlplane olm olmv1 olmv1-probe test-rego ## Run every test: unit, Rego, and end-to-end on a real API server.
	$(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

# LOAD_PROCS is how many busy loops `make test-loaded` runs beside the tests: one per core.
LOAD_PROCS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: test-loaded
test-loaded: controlplane olm olmv1 olmv1-probe test-rego ## Run the Go tests as `make test` does, beside a busy loop on every core (LOAD_PROCS): a machine that is not idle.
	@pids=""; for i in $$(seq $(LOAD_PROCS)); do (while :; do :; done) & pids="$$pids $$!"; done; \
	trap 'kill $$pids' EXIT; \
	echo "go test beside $(LOAD_PROCS) busy loops (pids$$pids)"; \
	$(GO) test -timeout $(TEST_TIMEOUT) $(TEST_FLAGS) ./...

.PHONY: test-rego
test-rego: ## Run opa test on the embedded policies and the policy packs, with per-file coverage.
	$(OPA) fmt --list --fail policies bundles
	$(OPA) check --strict policies
	$(OPA) test policies
	$(OPA) test --coverage --format=json policies | hack/rego-coverage.sh $(REGO_COVERAGE_MIN)
	@for p in bundles/packs/*/; do \
		echo "opa test $$p"; \
		$(OPA) check --strict "$$p"; \
		$(OPA) test "$$p"; \
		$(OPA) test --coverage --format=json "$$p" | hack/rego-coverage.sh $(REGO_COVERAGE_MIN); \
	done

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 30s), one by one; plain go test runs their seeds.
	$(GO) test -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/report/snapshot/
	$(GO) test -run '^$$' -fuzz '^FuzzBuild$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/decide/input/
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeResult$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./engine/
	$(GO) test -run '^$$' -fuzz '^FuzzReadTarball$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/decide/policysource/
	$(GO) test -run '^$$' -fuzz '^FuzzNoApprovalWhileNotUpgradeable$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/decide/approval/

# SOAK_OPS is how many operations `make soak` plays; SOAK_SEED replays a seed (random when empty).
SOAK_OPS ?= 3000
SOAK_SEED ?=

.PHONY: soak
soak: controlplane ## Run the long soak: SOAK_OPS (3000) random operations under the manager, every approval checked (SOAK_SEED= replays one).
	TOLLGATE_SOAK_OPS=$(SOAK_OPS) TOLLGATE_SOAK_SEED=$(SOAK_SEED) $(GO) test -count=1 -v -run '^TestSoak$$' -timeout 60m ./test/soak/

.PHONY: bench
bench: ## Run the benchmarks (5 runs each) and print one table: figure, baseline (same run), ratio, target.
	@mkdir -p bin
	$(GO) test -run '^$$' -bench . -benchmem -count 5 -timeout 60m ./engine/ | tee bin/bench.txt
	@$(GO) run ./hack/benchtable < bin/bench.txt

# TOLLGATE_SCALE_N is how many namespaces (Subscriptions, gates) the scale benchmark seeds.
TOLLGATE_SCALE_N ?= 200
SCALE_BENCHTIME ?= 3x

.PHONY: bench-scale
bench-scale: controlplane ## Time a flip of the global catalog's health over TOLLGATE_SCALE_N gates (default 200) against bare status writes.
	@mkdir -p bin
	TOLLGATE_SCALE_N=$(TOLLGATE_SCALE_N) $(GO) test -run '^$$' -bench '^BenchmarkCatalogFlip$$' -benchtime $(SCALE_BENCHTIME) -timeout 60m ./test/scale/ | tee bin/bench-scale.txt
	@$(GO) run ./hack/benchtable < bin/bench-scale.txt

.PHONY: scale-long
scale-long: controlplane ## The scale benchmark at 5,000 Subscriptions (target: a flip within 1.5x the bare writes).
	@$(MAKE) --no-print-directory bench-scale TOLLGATE_SCALE_N=5000 SCALE_BENCHTIME=2x

# TOLLGATE_EXTENSIONS_N is how many OLM v1 ClusterExtensions (and ExtensionGates) the extension
# benchmark seeds; EXTENSIONS_COUNT how many runs (one round each, on a fresh control plane).
TOLLGATE_EXTENSIONS_N ?= 1000
EXTENSIONS_COUNT ?= 1

.PHONY: bench-extensions
bench-extensions: controlplane $(OLMV1_BIN)/crds ## Time Tollgate moving TOLLGATE_EXTENSIONS_N ClusterExtensions' pins (default 1,000) against bare patches of as many pins.
	@mkdir -p bin
	TOLLGATE_EXTENSIONS_N=$(TOLLGATE_EXTENSIONS_N) $(GO) test -run '^$$' -bench '^BenchmarkExtensionPins$$' -benchtime 1x -count $(EXTENSIONS_COUNT) -timeout 60m ./test/scale/ | tee bin/bench-extensions.txt
	@$(GO) run ./hack/benchtable < bin/bench-extensions.txt

# OLMSIM_ROUNDS is how many rounds olmsim-rounds runs; OLMSIM_BUILDS the builds it compares
# (NAME=BINARY, space-separated) beside olmsim's bare approver.
OLMSIM_ROUNDS ?= 8
OLMSIM_BUILDS ?= tollgate=bin/tollgate

.PHONY: olmsim-rounds
olmsim-rounds: controlplane build ## Run ../shared/olmsim --flip at 1,000 namespaces for OLMSIM_BUILDS and the bare approver, alternated OLMSIM_ROUNDS times (8); print medians, ratios and what each run cost the machine in CPU.
	@test -d ../shared/olmsim || { echo "olmsim-rounds needs olmsim in ../shared/olmsim"; exit 1; }
	@# olmsim's InstallPlan steps lack the properties real OLM (v0.46) writes into an unpacked
	@# bundle's reference; without them Tollgate cannot tell a step's package and version and
	@# holds every plan. hack/olmsim/step-properties.patch adds them, as OLM writes them.
	rm -rf bin/olmsim-src && mkdir -p bin && cp -R ../shared/olmsim bin/olmsim-src && chmod -R u+w bin/olmsim-src
	git apply --unsafe-paths --directory=bin/olmsim-src hack/olmsim/step-properties.patch
	$(GO) -C bin/olmsim-src build -o "$(CURDIR)/bin/olmsim" .
	$(GO) run ./hack/olmsimrounds -rounds $(OLMSIM_ROUNDS) $(OLMSIM_BUILDS)

.PHONY: verify
verify: generate manifests ## Regenerate everything and fail if the tree differs from git.
	$(GO) mod tidy
	@for k in config/default config/crd/olm; do $(GO) tool kustomize build $$k > /dev/null || { echo "kustomize build $$k failed"; exit 1; }; done
	@if [ -n "$$(git status --porcelain -- apis config bundles/olm bundles/catalog bundles/catalog.Dockerfile go.mod go.sum)" ]; then \
		echo "generated files are out of date; run 'make generate manifests' and 'go mod tidy', then commit:"; \
		git status --porcelain -- apis config bundles/olm bundles/catalog bundles/catalog.Dockerfile go.mod go.sum; git --no-pager diff --stat -- apis config bundles/olm bundles/catalog bundles/catalog.Dockerfile go.mod go.sum; exit 1; fi
	@echo "generated files are up to date"

##@ Build

.PHONY: build
build: ## Build bin/tollgate (also usable as kubectl-tollgate) and bin/kubectl_complete-tollgate (kubectl's completion of the plugin).
	$(GO) build -ldflags "$(VERSION_LDFLAGS)" -o bin/tollgate ./cmd/tollgate
	@printf '#!/bin/sh\n# kubectl (1.26+) completes the tollgate plugin with this script, found on the PATH.\nexec kubectl-tollgate __complete "$$@"\n' > bin/kubectl_complete-tollgate
	@chmod +x bin/kubectl_complete-tollgate

.PHONY: image
image: ## Build the container image index (linux/amd64, linux/arm64) into bin/image (an OCI layout, no Docker needed) and print its digest.
	@for a in $(IMAGE_ARCHES); do \
		echo "building tollgate for linux/$$a"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build -trimpath -ldflags "-s -w $(VERSION_LDFLAGS)" \
			-o bin/linux_$$a/tollgate ./cmd/tollgate; \
	done
	@$(GO) run ./hack/image -binary-dir bin -arch $(shell echo $(IMAGE_ARCHES) | tr ' ' ',') \
		-version $(VERSION) -revision "$(REVISION)" -out bin/image

RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64

.PHONY: release
release: ## Build the kubectl-tollgate archives (binary, LICENSE, README.md), sha256sums.txt and the krew manifest into bin/release.
	rm -rf bin/release
	@for p in $(RELEASE_PLATFORMS); do \
		echo "building kubectl-tollgate for $$p"; \
		CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags "-s -w $(VERSION_LDFLAGS)" \
			-o bin/release/$${p%/*}_$${p#*/}/kubectl-tollgate ./cmd/tollgate; \
	done
	$(GO) run ./hack/release -dir bin/release -version $(VERSION) -extra LICENSE,README.md
	@cat bin/release/sha256sums.txt

.PHONY: controlplane
controlplane: $(ASSETS)/kube-apiserver $(ASSETS)/etcd ## Build the test control plane into bin/k8s (once per pinned version).

$(ASSETS)/etcd:
	@mkdir -p $(ASSETS)
	@echo "building etcd $(ETCD_VERSION) into $(ASSETS) (under a minute on a cold cache)"
	cd hack/tools/etcd && $(GO) build -v -o $@.tmp go.etcd.io/etcd/server/v3 2>&1 | ../../progress.sh etcd
	@mv $@.tmp $@

$(ASSETS)/kube-apiserver:
	@mkdir -p $(ASSETS)
	@echo "building kube-apiserver and kubectl $(K8S_VERSION) into $(ASSETS) (about 6 minutes on a cold cache, once)"
	cd hack/tools/kube-apiserver && $(GO) build -v -ldflags "$(K8S_LDFLAGS)" -o $(ASSETS)/tmp/ k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kubectl 2>&1 | ../../progress.sh kube-apiserver
	@mv $(ASSETS)/tmp/kubectl $(ASSETS)/kubectl
	@mv $(ASSETS)/tmp/kube-apiserver $@
	@rmdir $(ASSETS)/tmp

.PHONY: olm-fixtures
olm-fixtures: controlplane olm ## Regenerate test/testdata/olm: states real OLM writes, captured by test/olm at each scenario's interesting step.
	TOLLGATE_OLM_FIXTURES=$(CURDIR)/test/testdata/olm $(GO) test -count=1 -timeout 30m ./test/olm/

.PHONY: olmv1-fixtures
olmv1-fixtures: controlplane olmv1 ## Regenerate test/testdata/olmv1/snapshots: states real OLM v1 and Tollgate reach, captured by test/olmv1 with the catalog content they were decided on.
	TOLLGATE_OLMV1_FIXTURES=$(CURDIR)/test/testdata/olmv1/snapshots $(GO) test -count=1 -timeout 30m ./test/olmv1/

.PHONY: olm
olm: $(OLM_BIN)/catalog $(OLM_BIN)/olm $(OLM_BIN)/opm $(OLM_BIN)/crds ## Build real OLM (catalog, olm, opm) and copy its CRDs into bin/olm (once per pinned version).

# nice: the OLM build is long and must not starve whatever else runs on the machine.
$(OLM_BIN)/catalog $(OLM_BIN)/olm &:
	@mkdir -p $(OLM_BIN)/tmp
	@echo "building OLM $(OLM_VERSION) (catalog, olm) into $(OLM_BIN) (about 12 minutes on a cold cache, once)"
	cd hack/tools/olm && CGO_ENABLED=0 nice $(GO) build -v -tags json1 -ldflags "$(OLM_LDFLAGS)" -o $(OLM_BIN)/tmp/ \
		github.com/operator-framework/operator-lifecycle-manager/cmd/catalog \
		github.com/operator-framework/operator-lifecycle-manager/cmd/olm 2>&1 | ../../progress.sh olm
	@mv $(OLM_BIN)/tmp/catalog $(OLM_BIN)/catalog
	@mv $(OLM_BIN)/tmp/olm $(OLM_BIN)/olm
	@rmdir $(OLM_BIN)/tmp

$(OLM_BIN)/opm:
	@mkdir -p $(OLM_BIN)
	@echo "building opm $(OPM_VERSION) into $(OLM_BIN) (about 8 minutes on a cold cache, once)"
	cd hack/tools/olm && CGO_ENABLED=0 nice $(GO) build -v -tags json1,containers_image_openpgp -ldflags "$(OPM_LDFLAGS)" -o $@.tmp \
		github.com/operator-framework/operator-registry/cmd/opm 2>&1 | ../../progress.sh opm
	@mv $@.tmp $@

# OLM's eight CRDs, from the pinned module (the olm operator will not start without them all).
$(OLM_BIN)/crds:
	@mkdir -p $@.tmp
	cp "$$(cd hack/tools/olm && $(GO) list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)"/deploy/chart/crds/*.yaml $@.tmp/
	@chmod 644 $@.tmp/*.yaml
	@mv $@.tmp $@

.PHONY: olmv1
olmv1: $(OLMV1_BIN)/catalogd $(OLMV1_BIN)/operator-controller $(OLMV1_BIN)/crds ## Build real OLM v1 (catalogd, operator-controller) and copy its CRDs into bin/olmv1 (once per pinned version).

$(OLMV1_BIN)/catalogd $(OLMV1_BIN)/operator-controller &:
	@mkdir -p $(OLMV1_BIN)/tmp
	@echo "building OLM v1 $(OLMV1_VERSION) (catalogd, operator-controller) into $(OLMV1_BIN) (about 18 minutes on a cold cache, once)"
	cd hack/tools/olmv1 && CGO_ENABLED=0 nice $(GO) build -v -tags containers_image_openpgp -ldflags "$(OLMV1_LDFLAGS)" -o $(OLMV1_BIN)/tmp/ \
		github.com/operator-framework/operator-controller/cmd/catalogd \
		github.com/operator-framework/operator-controller/cmd/operator-controller 2>&1 | ../../progress.sh olmv1
	@mv $(OLMV1_BIN)/tmp/catalogd $(OLMV1_BIN)/catalogd
	@mv $(OLMV1_BIN)/tmp/operator-controller $(OLMV1_BIN)/operator-controller
	@rmdir $(OLMV1_BIN)/tmp

.PHONY: olmv1-probe
olmv1-probe: $(OLMV1_BIN)/probe ## Build the OLM v1 probe into bin/olmv1: operator-controller's own resolver, which fbc's differential test asks.

# The probe (hack/tools/olmv1/probe) uses operator-controller's internal packages, so it is built
# inside a writable copy of the pinned module, with the flags of the olmv1 target (one build
# cache); the copy is removed afterwards and none of it is kept in this repository.
$(OLMV1_BIN)/probe: hack/tools/olmv1/probe/main.go hack/tools/olmv1/go.mod
	@mkdir -p $(OLMV1_BIN)
	@rm -rf $(OLMV1_BIN)/probe-src
	d="$$(cd hack/tools/olmv1 && $(GO) mod download github.com/operator-framework/operator-controller && \
		$(GO) list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)"; \
		cp -r "$$d" $(OLMV1_BIN)/probe-src
	@chmod -R u+w $(OLMV1_BIN)/probe-src
	@mkdir -p $(OLMV1_BIN)/probe-src/cmd/tollgate-probe
	cp hack/tools/olmv1/probe/main.go $(OLMV1_BIN)/probe-src/cmd/tollgate-probe/main.go
	cd $(OLMV1_BIN)/probe-src && CGO_ENABLED=0 nice $(GO) build -tags olmv1probe,containers_image_openpgp -o $@.tmp ./cmd/tollgate-probe
	@mv $@.tmp $@
	@rm -rf $(OLMV1_BIN)/probe-src

# OLM v1's two CRDs, ClusterCatalog (catalogd) and ClusterExtension (operator-controller), from the
# pinned module.
$(OLMV1_BIN)/crds:
	@mkdir -p $@.tmp
	d="$$(cd hack/tools/olmv1 && $(GO) mod download github.com/operator-framework/operator-controller && \
		$(GO) list -m -f '{{.Dir}}' github.com/operator-framework/operator-controller)"; \
		cp "$$d"/config/base/catalogd/crd/bases/*.yaml "$$d"/config/base/operator-controller/crd/bases/*.yaml $@.tmp/
	@chmod 644 $@.tmp/*.yaml
	@mv $@.tmp $@

##@ Run

.PHONY: demo
demo: controlplane ## Run the demo: a held, explained, then approved upgrade on a local control plane.
	$(GO) run ./test/demo
