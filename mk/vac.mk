# VAC (seed 003): the conformance corpus and the VAC benchmark.
#   make conformance    every case of the reference corpus: verdict and reason set
#   make bench-vac      bench/vac.lua (VAC_REFERENCE=/path/to/vac-protocol compares)
#   make vac-fixtures   regenerate fixtures/vac (byte-reproducible)
# A copy of ../shared/conformance/vac, kept in the repository so a fresh clone
# anywhere can run it (see fixtures/conformance/vac/README.md).
VAC_CORPUS ?= fixtures/conformance/vac

.PHONY: conformance bench-vac vac-fixtures
conformance: vkit
	./vkit vac conformance $(VAC_CORPUS)

bench-vac: vkit
	./vkit script bench/vac.lua

vac-fixtures: vkit
	./vkit script fixtures/vac/generate.lua
