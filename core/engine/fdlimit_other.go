//go:build !unix

package engine

func checkFileLimit(int) (string, error) { return "", nil }
