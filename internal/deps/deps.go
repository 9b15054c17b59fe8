// Package deps holds a test of the module's shape: which packages may
// link which (clients link no datapath, the bare forwarder no lab), and
// the layering of the tree's folders (docs/DESIGN.md, "Packages").
package deps
