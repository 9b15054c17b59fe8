//go:build !linux

package main

import "errors"

func netnsName() (string, error) {
	return "", errors.New("network namespaces are Linux's")
}
