package main

import "os"

func mustRead(path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	return raw
}
