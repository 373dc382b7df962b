//go:build nri_v0_8

package main

// runPlugin: the v0.8.0 build has no plugin peer (its pkg/stub lacks the validation API that
// plugin.go implements); the Go plugins of the matrix are the v0.12 and v0.11 builds.
func runPlugin([]string) {
	fail("plugin: the %s build is a runtime peer only", nriVersion)
}

// runDrive: the drive runtime needs container fields (sysctl) that v0.8.0 does not have.
func runDrive([]string) {
	fail("drive: the %s build has no drive runtime", nriVersion)
}
