# The module half of 46: see disabled.yaml.
package tollgate.bad

deny := "hold everything"
