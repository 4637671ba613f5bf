"""`/invite/<token>/`: the page an invitation's link opens (page.py)."""

from django.urls import path

from toolsets.people.page import invite_page

app_name = "people"

urlpatterns = [path("<str:token>/", invite_page, name="invite")]
