package v1alpha1

// Condition types on UpgradeGate.status.conditions: the ten of OLM's Subscription status
// (abnormal-true) and Tollgate's own UpgradeBlocked.
const (
	ConditionResolutionFailed                  = "ResolutionFailed"
	ConditionCatalogSourcesUnhealthy           = "CatalogSourcesUnhealthy"
	ConditionCatalogSourceInvalid              = "CatalogSourceInvalid"
	ConditionPackageChannelInvalid             = "PackageChannelInvalid"
	ConditionInstallPlanFailed                 = "InstallPlanFailed"
	ConditionInstallPlanMissing                = "InstallPlanMissing"
	ConditionInstallPlanAwaitingManualApproval = "InstallPlanAwaitingManualApproval"
	ConditionInstalledCSVReplacementAvailable  = "InstalledCSVReplacementAvailable"
	ConditionInstalledCSVMissing               = "InstalledCSVMissing"
	ConditionInstalledCSVFailed                = "InstalledCSVFailed"
	ConditionUpgradeBlocked                    = "UpgradeBlocked"
)

// Denial codes of the embedded policies. Codes are API: admins override them by name.
const (
	CodeOperatorNotUpgradeable             = "OperatorNotUpgradeable"
	CodeOperatorConditionStale             = "OperatorConditionStale"
	CodeOperatorUpgrading                  = "OperatorUpgrading"
	CodeOperatorDegraded                   = "OperatorDegraded"
	CodeOperatorProgressing                = "OperatorProgressing"
	CodeCatalogSourceUnhealthy             = "CatalogSourceUnhealthy"
	CodeCatalogSourceInvalid               = "CatalogSourceInvalid"
	CodeInstallPlanIncludesBlockedOperator = "InstallPlanIncludesBlockedOperator"
	// CodeInstalledCSVMissing: the Subscription names an installed CSV that does not exist,
	// so neither its OperatorCondition nor its operands can be checked.
	CodeInstalledCSVMissing = "InstalledCSVMissing"
	// CodeTooManyOperatorGroups: the Subscription's namespace holds more than one
	// OperatorGroup, where OLM refuses to act. Never overridden.
	CodeTooManyOperatorGroups = "TooManyOperatorGroups"
	CodePolicyError           = "PolicyError"
)

// ConditionAutomaticApproval is True when the Subscription approves its InstallPlans
// automatically, so OLM upgrades it without waiting for Tollgate.
const ConditionAutomaticApproval = "AutomaticApproval"
