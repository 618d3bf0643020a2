package tui_test

func stopBrowser() {}
