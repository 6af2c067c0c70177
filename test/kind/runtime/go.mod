module dataplane-lab.invalid/test/runtime

go 1.25.0
