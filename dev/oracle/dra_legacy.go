//go:build legacy && v131

// 1.31 (legacy family): the oracle does not run DynamicResources yet; a case with device
// objects is refused.
package main

func init() { draSupported = false }
