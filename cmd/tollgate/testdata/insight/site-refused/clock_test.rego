package tollgate.packs.clock_test

import data.tollgate.packs.clock

test_denies if {
	count(clock.deny) == 1
}
