local n = 0
request = function()
  n = n + 1
  local path = "/apis/example.com/v1/namespaces/default/widgets/w" .. (n % 32)
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. os.getenv("TOKEN"), ["Accept"] = "application/json"})
end
