mod dispatch;
