package policies

// InputKey is a key of input document version 1 (README.md, "Input document, version 1") or of
// extension document version 1 (README.md, "Extension document, version 1").
type InputKey struct {
	Name string
	Type InputType
	// Required: tollgate.main gives no result for a document without it (_input_keys, and
	// _extension_keys for an extension document). The
	// others are apiVersion and now, which the policies check where they use them, and the
	// keys added after version 1 was first released, which the policies read with a default
	// because documents of older managers lack them.
	Required bool
}

// InputType is the JSON type of a key's value.
type InputType string

// The types README.md's table gives: a string; an object or null (README.md says which may be
// null); a list.
const (
	String InputType = "string"
	Object InputType = "object"
	List   InputType = "list"
)

// InputV1 are the keys of input document version 1, in README.md's order: the one list of
// them. The manager's builder writes every one (package input), the engine refuses a value of
// another type before evaluating (engine.ErrInputShape), and tests hold README.md's table and
// tollgate.main's _input_keys to it.
var InputV1 = []InputKey{
	{"apiVersion", String, false},
	{"subscription", Object, true},
	{"installedCSV", Object, true},
	{"currentCSV", Object, true},
	{"installPlan", Object, true},
	{"pendingInstallPlans", List, true},
	{"installPlanPeers", List, true},
	{"catalogSources", List, true},
	{"sourceCatalog", Object, true},
	{"replacedCSV", Object, false},
	{"operatorCondition", Object, true},
	{"operatorGroup", Object, true},
	{"operatorGroups", List, false},
	{"packageManifest", Object, true},
	{"operands", List, true},
	{"unreadableOperandKinds", List, false},
	{"gate", Object, true},
	{"dependency", Object, false},
	{"versions", Object, false},
	{"move", Object, false},
	{"now", String, false},
	{"config", Object, true},
}

// ExtensionAPIVersion is input.apiVersion of an extension document.
const ExtensionAPIVersion = "tollgate.dev/extension/v1"

// ExtensionV1 are the keys of extension document version 1 (input.apiVersion
// "tollgate.dev/extension/v1"), in README.md's order: one document per ClusterExtension and
// candidate successor bundle. Tests hold README.md's table and tollgate.main's _extension_keys to
// it. apiVersion and now are checked where they are used; unreadableOperandKinds is read with a
// default, as in input document version 1.
var ExtensionV1 = []InputKey{
	{"apiVersion", String, false},
	{"extension", Object, true},
	{"catalogs", List, true},
	{"catalogErrors", List, true},
	{"installed", Object, true},
	{"candidate", Object, true},
	{"operands", List, true},
	{"unreadableOperandKinds", List, false},
	{"gate", Object, true},
	{"move", Object, false},
	{"now", String, false},
	{"config", Object, true},
}
