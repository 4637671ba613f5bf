"""A notice's approve / reject links (agents/notices/views.py), at /notices/."""

from django.urls import path

from agents.notices import views

app_name = "notices"

urlpatterns = [
    path("links/<str:token>/", views.link_page, name="link"),
]
