"""What the tests share: servers and clients they run, data they load, the layers contract."""
