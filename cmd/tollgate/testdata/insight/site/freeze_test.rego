package tollgate.packs.sitefreeze_test

import data.tollgate.packs.sitefreeze

_sub(ns) := {"subscription": {"metadata": {"namespace": ns, "name": "etcd"}}}

test_team_f_is_frozen if {
	some d in sitefreeze.deny with input as _sub("team-f")
	d.code == "ChangeFreeze"
	d.message == "team-f is frozen until 2026-12-01"
}

test_other_namespaces_are_not if {
	count(sitefreeze.deny) == 0 with input as _sub("team-b")
}
