package tollgate.packs.sitefreeze_test

import data.tollgate.packs.sitefreeze

_sub(ns) := {"subscription": {"metadata": {"namespace": ns, "name": "etcd"}}}

test_team_f_is_frozen if {
	some d in sitefreeze.deny with input as _sub("team-f")
	d.code == "ChangeFreeze"
}

# fails: the freeze holds team-f only
test_team_b_is_frozen_too if {
	some d in sitefreeze.deny with input as _sub("team-b")
	d.code == "ChangeFreeze"
}
