# An import that nothing uses, which strict mode refuses.
# expect: import data.tollgate.lib unused
package tollgate.bad

import data.tollgate.lib

x := 1
