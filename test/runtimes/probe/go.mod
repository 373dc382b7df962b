module nriwire.test/runtimes-probe

go 1.24.0
