# METADATA
# description: |
#   A test-only policy pack (the engine never loads _test.rego files). It shows how an admin
#   pack adds a denial without editing tollgate.main: a `deny` set under data.tollgate.packs.<name>,
#   each rule with METADATA custom.code. It fires only for Subscriptions named "pack-fixture",
#   and emits a malformed denial for "pack-malformed".
package tollgate.packs.fixture_test

import data.tollgate.lib

# METADATA
# title: The fixture pack holds this Subscription
# custom:
#   code: FixtureHold
deny contains denial if {
	input.subscription.metadata.name == "pack-fixture"
	denial := lib.denial(rego.metadata.rule(), "held by the fixture pack")
}

deny contains {"reason": "no code"} if input.subscription.metadata.name == "pack-malformed"
